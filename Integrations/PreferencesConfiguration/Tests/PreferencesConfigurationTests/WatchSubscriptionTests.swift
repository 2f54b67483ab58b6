import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import Synchronization
import Testing

/// A watch holds one of the store's change feeds while its handler runs,
/// and no longer: returning from the handler or cancelling its task ends
/// the subscription (``PreferencesStoreActivity/feedSubscribers`` drops).
@Suite struct WatchSubscriptionTests {
    /// A file store with a value, and a provider whose own two feeds (the
    /// store's states and its problems) have started.
    static func startedProvider(in directory: TemporaryDirectory) async throws
        -> (PreferencesStore, PreferencesProvider)
    {
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.workers"] = 4 }
        let provider = PreferencesProvider(store: store)
        try await eventually("the provider's own two feeds to start") {
            store.activity.feedSubscribers == 2
        }
        return (store, provider)
    }

    @Test func returningFromAWatchsHandlerEndsItsSubscription() async throws {
        let directory = try TemporaryDirectory()
        let (store, provider) = try await Self.startedProvider(in: directory)
        let during = try await withDeadline(.seconds(30)) { progress in
            progress.waiting(for: "the watch's first value")
            return try await provider.watchValue(forKey: "http.workers", type: .int) { updates in
                var iterator = updates.makeAsyncIterator()
                _ = try await iterator.next()
                return store.activity.feedSubscribers
            }
        }
        #expect(during == 3, "the watch's own feed, beside the provider's two")
        #expect(store.activity.feedSubscribers == 2, "the watch's feed ended with its handler")
    }

    @Test func cancellingAWatchValueEndsItsSubscription() async throws {
        let directory = try TemporaryDirectory()
        let (store, provider) = try await Self.startedProvider(in: directory)
        let (during, after) = try await Self.cancelWatch(on: store) { seen in
            try await provider.watchValue(forKey: "http.workers", type: .int) { updates in
                for await _ in updates { seen() }
            }
        }
        #expect(during == 3, "the watch's own feed, beside the provider's two")
        #expect(after == 2, "the cancelled watch's feed ended with its handler")
    }

    @Test func cancellingAWatchSnapshotEndsItsSubscription() async throws {
        let directory = try TemporaryDirectory()
        let (store, provider) = try await Self.startedProvider(in: directory)
        let (during, after) = try await Self.cancelWatch(on: store) { seen in
            try await provider.watchSnapshot { updates in
                for await _ in updates { seen() }
            }
        }
        #expect(during == 3, "the watch's own feed, beside the provider's two")
        #expect(after == 2, "the cancelled watch's feed ended with its handler")
    }

    /// Runs `watch` in a task of its own, which calls `seen` for each
    /// update; once the first came, cancels the task and waits for it to
    /// end. Returns the store's open feeds at the first update, and once
    /// the task has ended.
    static func cancelWatch(
        on store: PreferencesStore,
        _ watch: @escaping @Sendable (_ seen: @escaping @Sendable () -> Void) async throws -> Void
    ) async throws -> (during: Int, after: Int) {
        let counts = AsyncStream<Int>.makeStream()
        let watching = Task {
            try await watch { counts.continuation.yield(store.activity.feedSubscribers) }
        }
        let during = try await withDeadline(.seconds(30)) { progress in
            progress.waiting(for: "the watch's first update")
            for await count in counts.stream { return count }
            return -1
        }
        watching.cancel()
        // Awaiting a task's value cannot be cancelled: a task of its own
        // awaits it, and the test waits for its flag, with a deadline.
        let ended = Mutex(false)
        Task.detached {
            _ = await watching.result
            ended.withLock { $0 = true }
        }
        try await eventually("the cancelled watch's task to end", within: .seconds(30)) {
            ended.withLock { $0 }
        }
        return (during, store.activity.feedSubscribers)
    }
}
