import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Temporary changes (A4): a value holds until a time, then the key reads as
/// it did before, with no write and nothing running at that moment. These
/// tests wait for time to pass: the end of a temporary value is the clock,
/// not an event (the feed's delivery of it is awaited as one).
@Suite(.scaledTimeLimit(minutes: 5))
struct TemporaryValueTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    @Test func aTemporaryValueHoldsThenTheEarlierOneReturnsWithNoWrite() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        var feed = store.changes(.language).makeAsyncIterator()
        #expect(try await feed.next(within: .seconds(20), "the current value") == "fr")
        // Long enough that even a loaded run under the thread sanitizer reads
        // it before it ends (with the whole suite on two cores, a task has
        // waited more than 20 s to run again).
        try await store.set(.language, "de", for: .seconds(60))
        #expect(store[.language] == "de")
        #expect(try await feed.next(within: .seconds(20), "the temporary value") == "de")
        let end = try #require(store.snapshot.temporaryValueEnd(forKey: "language"))
        #expect(end.timeIntervalSinceNow > 0 && end.timeIntervalSinceNow <= 60)
        // The file keeps the earlier value, and the temporary one beside it.
        let inFile = try fileSnapshot(url)
        #expect(inFile.document.values["language"] == "fr")
        #expect(inFile.document.temporary.overrides["language"]?.value == "de")
        // The end this store reports is the one the file holds, which every reader parses.
        #expect(inFile.document.temporary.overrides["language"]?.until == end)
        let bytes = try Data(contentsOf: url)
        let sequence = store.snapshot.sequence
        // The end reaches the feed when it comes (how late is printed, not
        // asserted: a timing, which a loaded run stretches).
        #expect(try await feed.next(within: .seconds(90), "the end of the temporary value") == "fr")
        let late = -end.timeIntervalSinceNow
        #expect(late >= 0, "delivered \(-late) s before the end")
        print("temporary value: the end reached the feed \(Int(late * 1000)) ms after it")
        #expect(store[.language] == "fr")
        #expect(store.snapshot.temporaryValueEnd(forKey: "language") == nil)
        // Nothing was written at that moment: not a change, no number.
        #expect(try Data(contentsOf: url) == bytes)
        #expect(store.snapshot.sequence == sequence)
        let entry = try #require(try await store.history().entries.last)
        #expect(entry.cause?.hasPrefix("temporary until ") == true)
        #expect(entry.changes["language"] == .init(old: "fr", new: "de"))
    }

    /// A merge (an import) is an ordinary change: it ends the temporary value
    /// of each key it sets, even to the value the key holds for now.
    @Test func aMergeEndsTheTemporaryValueOfEachKeyItSets() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        try await store.set(.language, "de", for: .seconds(3600))
        try await store.edit { try $0.merge(["language": "de", "theme": "dark"]) }
        #expect(store.snapshot.temporaryValueEnd(forKey: "language") == nil)
        let inFile = try fileSnapshot(url)
        #expect(inFile.document.values["language"] == "de")
        #expect(inFile.document.temporary.overrides["language"] == nil)
    }

    @Test func aTemporaryValueEndsWhileNothingRuns() async throws {
        let asked = Date()
        do {
            let store = try await PreferencesStore(fileURL: url, liveReads: false)
            try await store.set(.counter, 7, for: .seconds(20))
        }
        // The file holds the temporary value with its end (read from the
        // file, not the store: a run that starves this task past the end
        // would read the earlier value there, rightly).
        let written = try #require(try fileSnapshot(url).document.temporary.overrides["counter"])
        #expect(written.value == 7)
        let end = written.until
        #expect(abs(end.timeIntervalSince(asked) - 20) < 1, "ends at \(end), asked at \(asked)")
        // No store is open now; a reader that comes after the end reads the
        // key as it was before (unset: its default).
        try await Task.sleep(for: .seconds(max(0, end.timeIntervalSinceNow) + 0.2))
        let reader = try await PreferencesStore(fileURL: url, liveReads: false)
        #expect(reader[.counter] == 0)
        #expect(try fileSnapshot(url).values["counter"] == nil)
    }

    @Test func anOrdinaryChangeEndsItEarlyEvenToTheSameValue() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        try await store.set(.counter, 5, for: .seconds(3600))
        try await store.set(.counter, 5)
        #expect(store.snapshot.temporaryValueEnd(forKey: "counter") == nil)
        let inFile = try fileSnapshot(url)
        #expect(inFile.document.values["counter"] == 5)
        #expect(inFile.document.temporary.isEmpty)
        try await store.set(.counter, 9, for: .seconds(3600))
        try await store.remove(.counter)
        #expect(store[.counter] == 0)
        #expect(try fileSnapshot(url).document.temporary.isEmpty)
        #expect(try fileSnapshot(url).document.values["counter"] == nil)
    }

    @Test func otherKeysChangingKeepATemporaryValue() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        try await store.set(.counter, 2, for: .seconds(3600))
        try await store.set(.language, "fr")
        try await store.edit { $0[.darkMode] = true }
        #expect(store[.counter] == 2)
        let inFile = try fileSnapshot(url)
        #expect(inFile.document.values["counter"] == 1)
        #expect(inFile.document.temporary.overrides["counter"]?.value == 2)
        // Another process opening the store reads the temporary value too.
        let reader = try await runChild("prefs", ["--file", url.path, "get", "counter"])
        #expect(reader.standardOutput == "2\n", "\(reader.standardError)")
    }

    @Test func endedTemporaryValuesAreDroppedByTheNextWrite() async throws {
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(.counter, 3, for: .milliseconds(200))
        try await Task.sleep(for: .milliseconds(400))
        try await store.set(.language, "fr")
        let inFile = try fileSnapshot(url)
        #expect(inFile.document.temporary.isEmpty)
        #expect(inFile.values == ["language": "fr"])
        #expect(store[.counter] == 0)
    }

    /// A transform of a group commit that ends a temporary value and then
    /// throws is taken back alone: the value stays temporary, while the
    /// edits written with it land.
    @Test func aThrowingGroupedEditLeavesTheTemporaryValue() async throws {
        struct Refused: Error {}
        let store = try await PreferencesStore(storage: FileStorage(fileURL: url))
        try await store.set(.counter, 1)
        try await store.set(.counter, 2, for: .seconds(3600))
        let release = DispatchSemaphore(value: 0)
        let running = Locked(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await store.edit { prefs in
                    running.withLock { $0 = true }
                    _ = release.wait(timeout: .now() + TestTime.scaled(seconds: 120))
                    prefs[.language] = "fr"
                }
            }
            let holding = await eventually(seconds: 120) { running.value }
            #expect(holding, "the first edit never ran")
            group.addTask {
                await #expect(throws: Refused.self) {
                    try await store.edit { prefs in
                        // An ordinary change to the same value ends it...
                        prefs[.counter] = 2
                        throw Refused()
                    }
                }
            }
            group.addTask { try await store.edit { $0[.darkMode] = true } }
            let queued = await eventually(seconds: 120) { store.pendingEditCount == 2 }
            #expect(queued, "the two edits were not queued behind the first")
            release.signal()
            try await group.waitForAll()
        }
        // ...but that edit threw, so it is still temporary.
        #expect(store.snapshot.temporaryValueEnd(forKey: "counter") != nil)
        let inFile = try fileSnapshot(url)
        #expect(inFile.document.values["counter"] == 1)
        #expect(inFile.document.temporary.overrides["counter"]?.value == 2)
        #expect(inFile.values["language"] == "fr" && inFile.values["dark_mode"] == true)
    }
}
