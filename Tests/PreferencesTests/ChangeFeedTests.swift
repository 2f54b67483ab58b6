import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// The change feed within one process (C1, C2, C4, C5, <doc:ObservingChanges>).
/// Every wait has a deadline: a broken feed fails in seconds, naming what it
/// waited for.
@Suite(.scaledTimeLimit(minutes: 5)) struct ChangeFeedTests {
    @Test func problemFeedReportsMismatchesAndKeepsTheFileWatched() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(
            fileURL: directory.file("prefs.json"), liveReads: false)
        #expect(!store.core.isWatching)
        let problems = FeedRecorder(store.problemChanges())
        #expect(await problems.next([]) == [])
        #expect(store.core.isWatching)
        try await store.edit { $0[raw: "counter"] = "seven" }
        #expect(store[.counter] == 0)  // the read meets the mismatch
        let reported = await problems.next(where: { $0.map(\.key) == ["counter"] })
        #expect(reported?.first?.message.contains("seven") == true)
        try await store.set(.counter, 7)
        #expect(await problems.next([]) == [])
        await problems.cancel()
        #expect(!store.core.isWatching)
    }

    @Test func keyFeedStartsWithTheCurrentValueThenEachNewDistinctValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.set(.counter, 1)
        var feed = store.changes(.counter).makeAsyncIterator()
        #expect(try await feed.next("the current value, 1") == 1)

        // Other keys changing, and a write of the same value, yield nothing.
        // What they yielded would be in a feed when they return (C2), and a
        // feed nobody reads keeps its newest value; so a second feed, ended
        // after them, hands out anything they yielded.
        var quiet = store.changes(.counter).makeAsyncIterator()
        #expect(try await quiet.next("the second feed's current value, 1") == 1)
        let spurious = try await quiet.cancelAndTakeBuffered("writes that leave the key at 1") {
            try await store.set(.darkMode, true)
            try await store.set(.counter, 1)
        }
        #expect(spurious == nil, "a write that left the key at 1 yielded \(spurious ?? 0)")

        try await store.set(.counter, 2)
        #expect(try await feed.next("2, set after the writes that did not change it") == 2)
        try await store.remove(.counter)
        #expect(try await feed.next("0, the default, after remove") == 0)
        try await store.edit { $0[.counter] = 5 }
        #expect(try await feed.next("5, set by edit") == 5)
    }

    @Test func snapshotFeedStartsWithTheCurrentStateThenEachNewState() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.set(.language, "fr")
        var feed = store.changes().makeAsyncIterator()
        #expect(try await feed.next("the current state")[.language] == "fr")
        try await store.set(.darkMode, true)
        let next = try await feed.next("the state after setting darkMode")
        #expect(next[.darkMode] == true)
        #expect(next[.language] == "fr")
        try await store.clear()
        #expect(try await feed.next("the state after clear").values.isEmpty)
    }

    /// C2: the value is already buffered in the stream when `set` returns,
    /// so even a consumer whose task is cancelled right then still gets it
    /// (a cancelled stream hands out what it buffered, then ends).
    @Test func aLocalWriteIsInTheFeedBeforeSetReturns() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        for value in 1...20 {
            var feed = store.changes(.counter).makeAsyncIterator()
            _ = try await feed.next("the current value")
            let received = try await feed.cancelAndTakeBuffered("set(\(value))") {
                try await store.set(.counter, value)
            }
            #expect(received == value, "not in the feed when set(\(value)) returned")
        }
    }

    @Test func theSameHoldsForSnapshotFeedsOnTwoHandles() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let writer = try await PreferencesStore(fileURL: url)
        let reader = try await PreferencesStore(fileURL: url)
        var feed = reader.changes().makeAsyncIterator()
        _ = try await feed.next("the reader's current state")
        let received = try await feed.cancelAndTakeBuffered("the writer's set") {
            try await writer.set(.language, "de")
        }
        #expect(received?[.language] == "de", "not in the reader's feed when the writer returned")
    }

    /// C4: a subscriber that does not read holds back neither writers nor
    /// other subscribers, and reads the latest value when it catches up.
    @Test func aSlowSubscriberSkipsToTheLatestAndBlocksNobody() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        var slow = store.changes(.counter).makeAsyncIterator()
        let fast = FeedRecorder(store.changes(.counter))
        for value in 1...200 { try await store.set(.counter, value) }
        #expect(await fast.next(200) == 200)
        #expect(try await slow.next("the latest value, 200, from the feed left unread") == 200)
        let seen = fast.values
        #expect(seen.last == 200)
        #expect(seen == seen.sorted(), "values arrived out of order: \(seen)")
    }

    @Test func concurrentWritersAndSubscribersAllEndOnTheFinalValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let recorders = (0..<20).map { _ in FeedRecorder(store.changes(.counter)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask { for _ in 0..<50 { try await store.edit { $0[.counter] += 1 } } }
            }
            try await group.waitForAll()
        }
        // One deadline for all twenty: a broken feed fails once, not twenty times over.
        let deadline = TestTime.deadline(in: .seconds(20))
        for (index, recorder) in recorders.enumerated() {
            let last = await recorder.next(500, timeout: deadline - .now)
            #expect(last == 500, "subscriber \(index) got \(recorder.values.suffix(3))")
            #expect(recorder.values == recorder.values.sorted())
        }
    }

    /// C5: with live reads off, the watcher runs while at least one feed is
    /// active, whichever way the feeds end (leaving the loop, cancelling the
    /// task).
    @Test func withLiveReadsOffTheWatcherRunsOnlyWhileSomeoneSubscribes() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(
            fileURL: directory.file("prefs.json"), liveReads: false)
        #expect(!store.core.isWatching)

        let first = FeedRecorder(store.changes(.counter))
        #expect(await first.next(0) == 0)
        #expect(store.core.isWatching)

        let (started, signal) = AsyncStream<Void>.makeStream()
        let breaking = Task {
            for await value in store.changes(.counter) {
                signal.yield()
                if value == 3 { break }
            }
        }
        var startedSignals = started.makeAsyncIterator()
        try await startedSignals.next("the breaking loop's first value")
        let second = FeedRecorder(store.changes())
        #expect(store.core.subscriberCount == 3)
        try await store.set(.counter, 3)
        try await withDeadline("the loop to break at 3", timeout: .seconds(20)) {
            await breaking.value
        }
        #expect(store.core.subscriberCount == 2)

        await first.cancel()
        #expect(store.core.isWatching)
        await second.cancel()
        #expect(store.core.subscriberCount == 0)
        #expect(!store.core.isWatching)

        // A new subscriber starts it again.
        let third = FeedRecorder(store.changes(.counter))
        #expect(await third.next(3) == 3)
        #expect(store.core.isWatching)
        await third.cancel()
        #expect(!store.core.isWatching)
    }

    /// S16 with C5: with live reads on, the watch lives as long as the store;
    /// feeds coming and going do not stop it.
    @Test func withLiveReadsTheWatcherRunsWhileTheStoreIsOpen() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        #expect(store.core.isWatching)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        await feed.cancel()
        #expect(store.core.subscriberCount == 0)
        #expect(store.core.isWatching)
    }

    @Test func droppingAnUnreadFeedEndsItsSubscription() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(
            fileURL: directory.file("prefs.json"), liveReads: false)
        do {
            let feed = store.changes(.counter)
            _ = feed
            #expect(store.core.isWatching)
        }
        #expect(store.core.subscriberCount == 0)
        #expect(!store.core.isWatching)
    }

    @Test func registeredDefaultsReachSnapshotFeeds() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let feed = FeedRecorder(store.changes())
        store.register(defaults: ["greeting": "hello"])
        let snapshot = await feed.next(where: { $0.value(forKey: "greeting") == "hello" })
        #expect(snapshot != nil)
    }
}
