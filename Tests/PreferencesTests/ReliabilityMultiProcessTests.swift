import Foundation
import PreferencesTestSupport
import Synchronization
import Testing

@testable import Preferences

/// Four processes × 500 read-modify-write increments through `edit`, with
/// `prefs set` of other keys running beside them (<doc:Reliability>): the count is
/// exact and every other key holds what was last set.
@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 10))
struct ReliabilityMultiProcessTests {
    static let processes = 4
    static let increments = 500

    final class Flag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    /// `prefs set` of one key in the store at `url`: the operator's tool
    /// beside the incrementers (the suite depends on the built `prefs`).
    static func prefsSet(_ url: URL, _ key: String, _ value: Int) -> [String] {
        ["--file", url.path, "set", key, "\(value)"]
    }

    @Test func incrementsAreExactWithOtherKeysSetBeside() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        // A larger history than the writers' own default, asked for once:
        // the store records it, and every writer then keeps at least it (H4).
        var limits = PreferencesLimits()
        limits.history = HistoryLimit(entries: 10_000, bytes: 16 << 20)
        do {
            let setup = try await PreferencesStore(fileURL: url, limits: limits, liveReads: false)
            try await setup.set(.language, "fr")
        }
        let done = Flag()
        let side = Task.detached { () -> (set: [String: Int64], count: Int, failures: [String]) in
            var set: [String: Int64] = [:]
            var failures: [String] = []
            var round = 0
            while !done.raised.load(ordering: .relaxed) || round < 5 {
                round += 1
                // Ten keys, each overwritten again and again; the last value must stick.
                let key = "other_\(round % 10)"
                let value = round * 7
                do {
                    let result = try await runChild("prefs", Self.prefsSet(url, key, value))
                    if result.status == 0 {
                        set[key] = Int64(value)
                    } else {
                        failures.append("\(key)=\(value): \(result.standardError)")
                    }
                } catch {
                    failures.append("\(key)=\(value): \(error)")
                }
            }
            return (set, round, failures)
        }
        let children = try (0..<Self.processes).map { _ in
            try RunningProcess(
                "prefs-harness", ["increment", url.path, "counter", "\(Self.increments)"])
        }
        // 500 durable increments each, contending for one lock: minutes, not
        // seconds, for instrumented children on a busy machine.
        for child in children {
            #expect(try await child.nextLine(timeout: .seconds(300)) == "done")
            #expect(try await child.exit() == 0)
        }
        done.raised.store(true, ordering: .relaxed)
        let (others, sets, failures) = await side.value
        #expect(failures.isEmpty, "\(failures)")

        let expected = Int64(Self.processes * Self.increments)
        let counter = try storedInteger("counter", in: url)
        #expect(counter == expected)
        var intact = 0
        for (key, value) in others.sorted(by: { $0.key < $1.key }) {
            let stored = try storedInteger(key, in: url)
            #expect(stored == value, "\(key)")
            if stored == value { intact += 1 }
        }
        // Every change has its entry: the setup's one, the increments, and
        // each prefs set, numbered 1, 2, 3 … with no gap, each key's old
        // value the new value of the change before that touched it.
        let reader = try await PreferencesStore(fileURL: url, limits: limits, liveReads: false)
        let history = try await reader.history()
        let expectedChanges = 1 + Int64(Self.processes * Self.increments) + Int64(sets)
        #expect(history.latest == expectedChanges)
        #expect(history.entries.map(\.sequence) == Array(1...expectedChanges))
        var last: [String: PreferenceValue] = [:]
        var chained = true
        for entry in history.entries {
            for (key, change) in entry.changes {
                if change.old != last[key] {
                    chained = false
                    Issue.record(
                        "#\(entry.sequence) \(key): old \(String(describing: change.old)), before it \(String(describing: last[key]))"
                    )
                }
                last[key] = change.new
            }
        }
        #expect(last == reader.snapshot.values, "the entries replayed end where the file is")
        Reliability.report(
            "history: \(history.entries.count) entries, #1 to #\(history.latest), no gap, "
                + (chained ? "each old value the previous new one" : "NOT CHAINED"))
        Reliability.report(
            "multi-process: \(Self.processes) processes × \(Self.increments) increments = \(counter ?? -1) "
                + "(expected \(expected)); beside them "
                + "prefs set ran \(sets) times until they finished, "
                + "\(intact)/\(others.count) other keys intact")
    }
}
