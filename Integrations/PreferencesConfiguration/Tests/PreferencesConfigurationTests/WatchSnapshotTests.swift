import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import Testing

/// `watchSnapshot` yields the store's state now, then each change, whichever
/// process made it (the Preferences article "Using Preferences with
/// swift-configuration").
@Suite struct WatchSnapshotTests {
    @Test func theCurrentStateComesFirstThenEachChangeAnotherProcessMakesInOrder() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "log.level"] = "info" }
        // The state the watch starts from was written by another process.
        try await withDeadline(.seconds(60)) { progress in
            progress.waiting(for: "`prefs set http.workers 1` to end")
            try await prefs("--file", file.path, "set", "http.workers", "1")
        }
        try await eventually("the store to read http.workers 1 from the other process") {
            store.storedValue(forKey: "http.workers") == 1
        }
        let provider = PreferencesProvider(store: store)
        let seen = try await withDeadline(.seconds(120)) { progress in
            try await provider.watchSnapshot { updates in
                var seen: [Values] = []
                progress.waiting(for: "watchSnapshot's first snapshot")
                for await snapshot in updates {
                    let values = Values(
                        workers: try snapshot.value(forKey: "http.workers", type: .int).value?
                            .content,
                        level: try snapshot.value(forKey: "log.level", type: .string).value?.content
                    )
                    seen.append(values)
                    // One change at a time, each made once the last one was
                    // seen, so none can be skipped as a slow consumer's.
                    guard case .int(let count)? = values.workers, count < 4 else { break }
                    progress.waiting(for: "`prefs set http.workers \(count + 1)` to end")
                    try await prefs("--file", file.path, "set", "http.workers", "\(count + 1)")
                    progress.waiting(
                        for: "the snapshot with http.workers \(count + 1) (seen: \(seen))")
                }
                return seen
            }
        }
        #expect(seen == (1...4).map { Values(workers: .int($0), level: .string("info")) })
    }

    /// The two keys' values in one snapshot (nil: absent).
    struct Values: Equatable, Sendable, CustomStringConvertible {
        var workers: ConfigContent?
        var level: ConfigContent?

        var description: String {
            [workers, level].map { $0.map { "\($0)" } ?? "absent" }.joined(separator: " ")
        }
    }
}
