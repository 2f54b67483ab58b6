import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines: ChildOutput

    /// Starts the child on `url`; with `user`, as that uid and gid (via setpriv).
    init(_ url: URL, user: UInt32? = nil) async throws {
        let harness = productURL("prefs-harness").path
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid=\(user)", "--regid=\(user)", "--clear-groups", harness, "serve", url.path,
            ]
        } else {
            process.executableURL = URL(fileURLWithPath: harness)
            process.arguments = ["serve", url.path]
        }
        process.environment = cleanEnvironment()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        lines = ChildOutput(output.fileHandleForReading, name: "prefs-harness serve")
        try await lines.expectLine("ready")
    }

    /// Sends one command and returns the child's answer.
    func send(_ command: String) async throws -> String {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        guard let answer = try await lines.nextLine() else {
            throw DeadlineExceeded(
                description: "prefs-harness serve ended before answering \"\(command)\"; "
                    + "it printed: \"\(lines.transcript)\"")
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
        try? input.fileHandleForWriting.close()
        let status = try await waitForExit(process, "prefs-harness serve", output: lines)
        #expect(status == 0, "prefs-harness serve printed: \"\(lines.transcript)\"")
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { sendSignal(SIGKILL, to: process.processIdentifier) }
    }
}
