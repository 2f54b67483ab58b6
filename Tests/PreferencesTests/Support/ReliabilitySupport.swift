import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// How hard the reliability harnesses push: the quick mode runs in every
/// `swift test`; `PREFS_RELIABILITY=full` (set by `scripts/reliability.sh`)
/// runs the long version. `PREFS_RELIABILITY_SEED` repeats a run's random
/// choices exactly.
enum Reliability {
    static let environment = ProcessInfo.processInfo.environment
    static let isFull = environment["PREFS_RELIABILITY"] == "full"
    static var kills: Int { isFull ? 1000 : 100 }
    static let seed: UInt64 =
        environment["PREFS_RELIABILITY_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...999_999)

    /// One line of figures for `scripts/reliability.sh` to collect.
    static func report(_ line: String) {
        print("reliability: \(line)")
    }
}

/// SplitMix64: small, seedable, the same on every platform.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(state: UInt64) { self.state = state }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// The stored integer of `key` in the file at `url`, read strictly as the
/// store's decoder reads it (a file that does not decode throws).
func storedInteger(_ key: String, in url: URL) throws -> Int64? {
    let bytes = Array(try Data(contentsOf: url))
    let document = try StoreDocument.decode(bytes, file: url.path, limits: PreferencesLimits())
    guard let value = document.values[key] else { return nil }
    guard case .int(let number) = value else {
        Issue.record("\(key) holds \(value.jsonText), not an integer")
        return nil
    }
    return number
}

/// A `prefs-harness serve` child: one long-lived store in another process,
/// driven line by line, optionally running as another user. Every answer is
/// awaited with a deadline, off the cooperative pool.
final class ServedStore {
    private let child: RunningProcess

    /// Starts the child on `url`; with `user`, as that uid and gid.
    init(_ url: URL, user: UInt32? = nil) async throws {
        child = try ChildCommand(
            "prefs-harness", ["serve", url.path], input: .open, output: .merged, user: user
        ).start()
        try await child.lines.expectLine("ready")
    }

    /// Sends one command and returns the child's answer.
    func send(_ command: String) async throws -> String {
        child.send(command + "\n")
        guard let answer = try await child.nextLine() else {
            throw DeadlineExceeded(
                description: "\(child.commandLine) ended before answering \"\(command)\"; "
                    + "it printed: \"\(child.transcript)\"")
        }
        return answer
    }

    /// The errno of an `error io CODE …` answer, or nil for any other answer.
    static func ioCode(_ answer: String) -> Int32? {
        let words = answer.split(separator: " ")
        guard words.count >= 3, words[0] == "error", words[1] == "io" else { return nil }
        return Int32(words[2])
    }

    /// Ends the child (end of input) and waits for it, with a deadline.
    func stop() async throws {
        child.closeInput()
        let status = try await child.exit()
        #expect(status == 0, "prefs-harness serve printed: \"\(child.transcript)\"")
    }

    deinit {
        child.closeInput()
        child.kill()
    }
}
