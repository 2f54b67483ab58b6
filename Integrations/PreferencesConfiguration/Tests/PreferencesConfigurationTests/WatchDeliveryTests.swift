import Configuration
import Foundation
import Logging
import Preferences
import PreferencesConfiguration
import Testing

/// What a provider's `watchValue` yields when the store changes under it: a
/// value of another type, its file deleted, changes faster than the
/// consumer reads them.
@Suite struct WatchDeliveryTests {
    @Test func aValueOfAnotherTypeArrivingInAWatchYieldsTheErrorAndTheWatchGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "http.port"] = 8080 }
        let (logger, handler) = LoggingTests.logger(.info)
        let provider = PreferencesProvider(store: store, logger: logger)
        let seen = try await withDeadline(.seconds(120)) { progress in
            try await provider.watchValue(forKey: "http.port", type: .int) { updates in
                var iterator = updates.makeAsyncIterator()
                progress.waiting(for: "the watch's first value")
                var seen = [Update(try await iterator.next())]
                // Another process stores a string where the service reads an int.
                progress.waiting(for: "`prefs set http.port eighty --type string` to end")
                try await prefs(
                    "--file", file.path, "set", "http.port", "eighty", "--type", "string")
                progress.waiting(for: "the watch to yield the string (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                progress.waiting(for: "`prefs set http.port 9090 --type int` to end")
                try await prefs("--file", file.path, "set", "http.port", "9090", "--type", "int")
                progress.waiting(for: "the watch to yield 9090 (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                return seen
            }
        }
        // The mismatch is an error, not an absent key (which would let the
        // providers behind answer), and the watch goes on after it.
        let expected: [Update] = [
            .value(.int(8080)),
            .failed(
                "Config value for key 'http.port' failed to convert to type int."
                    + " The store holds a string."),
            .value(.int(9090)),
        ]
        #expect(seen == expected)
        let warnings = handler.entries.filter { $0.metadata["preferences.type"] == "int" }
        #expect(warnings.count == 1, "\(LoggingTests.lines(handler))")
        #expect(warnings.first?.level == .warning)
        #expect(warnings.first?.metadata["preferences.key"] == "http.port")
    }

    @Test func deletingTheStoresFileUnderAWatchReadsAsAbsentAndTheWatchGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "http.workers"] = 4 }
        // Two handles on the one store: closing the first ends its watch
        // (what it yielded can then be read to the end, with no wait for a
        // value that may not come); the second's watch goes on.
        let other = try await PreferencesStore(fileURL: file)
        let first = PreferencesProvider(store: store)
        let second = PreferencesProvider(store: other)
        let (ended, goesOn) = try await withDeadline(.seconds(120)) { progress in
            try await first.watchValue(forKey: "http.workers", type: .int) { firstUpdates in
                try await second.watchValue(forKey: "http.workers", type: .int) { secondUpdates in
                    var firstWatch = firstUpdates.makeAsyncIterator()
                    var secondWatch = secondUpdates.makeAsyncIterator()
                    progress.waiting(for: "both watches' first value")
                    var ended = [Update(try await firstWatch.next())]
                    var goesOn = [Update(try await secondWatch.next())]

                    try FileManager.default.removeItem(at: file)
                    progress.waiting(for: "the store to notice its file deleted")
                    try await eventually("the store to read its deleted file as empty") {
                        store.snapshot.values.isEmpty
                    }
                    // The store delivers a state to its feeds on its queue:
                    // a reload, queued after that delivery, returns after it.
                    try await store.reload()
                    await store.close()
                    progress.waiting(for: "the first watch to end (seen: \(ended))")
                    while ended.last != .ended, ended.count < 4 {
                        ended.append(Update(try await firstWatch.next()))
                    }
                    try #require(ended == [.value(.int(4)), .absent, .ended])

                    progress.waiting(for: "the second watch to yield the deletion")
                    goesOn.append(Update(try await secondWatch.next()))
                    progress.waiting(for: "`prefs set http.workers 8` to end")
                    try await prefs("--file", file.path, "set", "http.workers", "8")
                    progress.waiting(for: "the second watch to yield 8 (seen: \(goesOn))")
                    goesOn.append(Update(try await secondWatch.next()))
                    return (ended, goesOn)
                }
            }
        }
        #expect(ended == [.value(.int(4)), .absent, .ended])
        #expect(goesOn == [.value(.int(4)), .absent, .value(.int(8))])
        #expect(try second.value(forKey: "http.workers", type: .int).value?.content == .int(8))
    }

    @Test func aSlowConsumerSkipsToTheLatestValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.workers"] = 1 }
        let provider = PreferencesProvider(store: store)
        let seen = try await withDeadline(.seconds(60)) { progress in
            try await provider.watchValue(forKey: "http.workers", type: .int) { updates in
                var iterator = updates.makeAsyncIterator()
                progress.waiting(for: "the watch's first value")
                var seen = [Update(try await iterator.next())]
                // Three changes while the consumer reads nothing; a write in
                // this process reaches the watch before it returns.
                for workers in 2...4 {
                    try await store.edit { $0[raw: "http.workers"] = .int(Int64(workers)) }
                }
                progress.waiting(for: "the watch's value after three changes (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                try await store.edit { $0[raw: "http.workers"] = 5 }
                progress.waiting(for: "the watch to yield 5 (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                return seen
            }
        }
        #expect(seen == [.value(.int(1)), .value(.int(4)), .value(.int(5))])
    }
}
