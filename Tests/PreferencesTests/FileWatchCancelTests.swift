import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Synchronization
import Testing

@testable import Preferences

/// The file backend's watch stops when cancelled: no callback for any later
/// write, and its directory watch released. A second watch on the same file, left
/// running, is the witness that each later write was seen by the system.
@Suite(.serialized, .scaledTimeLimit(minutes: 10)) struct FileWatchCancelTests {
    /// Counts a watch's callbacks; each one is also a value of `stream`.
    final class Callbacks: Sendable {
        let count = Atomic<Int>(0)
        let stream: AsyncStream<Int>
        private let continuation: AsyncStream<Int>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        }

        var onChange: @Sendable (StorageWatchEvent) -> Void {
            { [self] _ in continuation.yield(count.add(1, ordering: .relaxed).newValue) }
        }
    }

    @Test func aCancelledWatchHearsNoLaterWriteAndReleasesItsDirectoryWatch() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let other = try await PreferencesStore(storage: FileStorage(fileURL: url), liveReads: false)
        try await other.set(.counter, 0)

        let watched = Callbacks()
        let witness = Callbacks()
        let watch = try #require(try FileStorage(fileURL: url).watch(watched.onChange))
        let witnessWatch = try #require(try FileStorage(fileURL: url).watch(witness.onChange))
        let watchedEvents = FeedRecorder(watched.stream)
        let witnessEvents = FeedRecorder(witness.stream)
        let any: @Sendable (Int) -> Bool = { _ in true }

        // Running: both hear a write by another store.
        try await other.set(.counter, 1)
        #expect(await watchedEvents.next(where: any) != nil, "the watch heard nothing")
        #expect(await witnessEvents.next(where: any) != nil, "the witness heard nothing")

        watch.cancel()
        // Once released, no handler of the watch is running or queued.
        if let watcher = watch as? FileWatcher {
            try await withDeadline(
                "the cancelled watch to close its descriptors", timeout: .seconds(60)
            ) {
                await watcher.released()
            }
        }
        let heard = watched.count.load(ordering: .relaxed)

        // Later writes: the witness hears each; the cancelled watch none.
        for value in 2...6 {
            try await other.set(.counter, value)
            #expect(
                await witnessEvents.next(where: any) != nil, "the witness missed write \(value)")
        }
        #expect(watched.count.load(ordering: .relaxed) == heard)

        // With both watches cancelled, the process's one inotify instance
        // drops its watch on the directory (after a short linger).
        witnessWatch.cancel()
        #expect(
            await eventually { DirectoryWatches.count(of: directory.path) == 0 },
            "the directory is still watched after every watch on it was cancelled")
        await watchedEvents.cancel()
        await witnessEvents.cancel()
    }
}
