import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Many subscribers, and what is left once they are gone (C5, <doc:ObservingChanges>).
///
/// A watcher can hold only the process's inotify instance (one, shared by
/// every watcher: Linux) and descriptors on its directory and file (kqueue:
/// Darwin). The tests count exactly those, ``watchDescriptors(in:)``,
/// against what one watcher costs, measured by ``costOfOneWatcher(on:in:)``.
/// The process's other descriptors come and go with the suites running
/// beside (their children's pipes, their own files, the inotify instance
/// each replica wait opens for its registrations), so they are left out:
/// an inotify instance counts when it is the shared one or watches this
/// test's directory. The counts and watches are read in /proc/self; the
/// tests run one at a time.
@Suite(
    .serialized, .scaledTimeLimit(minutes: 5),
    .enabled(
        if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
        "counts this process's descriptors and inotify watches in /proc/self"))
struct ChangeFeedLifecycleTests {
    /// The descriptors a watcher may hold: inotify instances, and
    /// descriptors on `directory` or anything in it.
    static func watchDescriptors(in directory: TemporaryDirectory) -> [Int32: String] {
        let root = directory.url.resolvingSymlinksInPath().path
        #if canImport(Glibc) || canImport(Musl)
            let shared = DirectoryWatchHub.shared.descriptor
        #else
            let shared: Int32? = nil
        #endif
        return openDescriptors().filter { descriptor, target in
            if target == "anon_inode:inotify" {
                return descriptor == shared || !watchNumbers(of: root, in: [descriptor]).isEmpty
            }
            return target == root || target.hasPrefix(root + "/")
        }
    }

    /// How many of those one more watcher on `path` holds while it runs,
    /// beyond what watchers share (the process's inotify instance, which
    /// the first watcher here starts if no watcher has yet).
    static func costOfOneWatcher(on path: String, in directory: TemporaryDirectory) async throws
        -> Int
    {
        let first = try FileWatcher.start(path: path) {}
        let shared = watchDescriptors(in: directory).count
        let second = try FileWatcher.start(path: path) {}
        let cost = watchDescriptors(in: directory).count - shared
        first.cancel()
        second.cancel()
        try await withDeadline("the measuring watchers to close their descriptors") {
            await first.released()
            await second.released()
        }
        return cost
    }

    /// Returns once the store's queue has run what was submitted so far:
    /// the re-reads that starting a watch asks for, whose file is open while
    /// they run.
    static func storeQueueDrained(_ store: PreferencesStore) async throws {
        try await withDeadline("the store's queued re-reads to finish") {
            await store.core.queue.run {}
        }
    }

    @Test func aThousandSubscribersAllSeeAnExternalWriteAndLeaveNothingBehind() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        let cost = try await Self.costOfOneWatcher(on: url.path, in: directory)
        let before = Self.watchDescriptors(in: directory)

        let recorders = (0..<1000).map { _ in FeedRecorder(store.changes(.counter)) }
        #expect(store.core.subscriberCount == 1000)
        let watcher = try #require(store.core.state.withLock { $0.watching.watch } as? FileWatcher)
        try await Self.storeQueueDrained(store)
        let during = Self.watchDescriptors(in: directory)
        #expect(
            during.count <= before.count + cost,
            "a thousand subscribers hold \(during.count - before.count) more descriptors, one watcher \(cost): \(during)"
        )
        #expect(DirectoryWatches.count(of: directory.path) == 1)
        let child = try RunningProcess("prefs-harness", ["set", url.path, "counter", "77"])
        #expect(try await child.nextLine() == "ok")
        child.kill()
        _ = try await child.exit()
        // One deadline for all: a broken feed fails once, not a thousand times over.
        let deadline = TestTime.deadline(in: .seconds(30))
        var missing = 0
        for recorder in recorders where await recorder.next(77, timeout: deadline - .now) == nil {
            missing += 1
        }
        #expect(missing == 0, "\(missing) of 1000 subscribers did not see 77")

        for recorder in recorders { await recorder.cancel() }
        #expect(store.core.subscriberCount == 0)
        #expect(!store.core.isWatching)
        try await withDeadline("the store's watcher to close its descriptors") {
            await watcher.released()
        }
        try await Self.storeQueueDrained(store)
        let after = Self.watchDescriptors(in: directory)
        #expect(
            after.count <= before.count,
            "left open: \(after.filter { before[$0.key] != $0.value })")
        #expect(inotifyCount(after) == 1, "\(after)")
        let unwatched = await eventually { DirectoryWatches.count(of: directory.path) == 0 }
        #expect(unwatched, "the directory is still watched after every subscriber left")
    }

    /// Each cycle starts and stops the watcher: a leak per watch would show
    /// as a thousand descriptors, or a directory still watched.
    @Test func aThousandSubscribeAndCancelCyclesLeaveNoDescriptorBehind() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(.counter, 1)
        let cost = try await Self.costOfOneWatcher(on: url.path, in: directory)
        let before = Self.watchDescriptors(in: directory)
        let watchers = try await withDeadline("a thousand subscribe-and-cancel cycles") {
            var watchers: [FileWatcher] = []
            for cycle in 0..<1000 {
                let (started, signal) = AsyncStream<Void>.makeStream()
                let task = Task {
                    for await value in store.changes(.counter) {
                        signal.yield()
                        if value == -1 { return }
                    }
                }
                var startedSignals = started.makeAsyncIterator()
                await startedSignals.next()
                let watcher = try #require(
                    store.core.state.withLock { $0.watching.watch } as? FileWatcher)
                // Half the feeds end by cancelling their task, half are
                // cancelled before their first read of a new value.
                if cycle.isMultiple(of: 2) { await Task.yield() }
                task.cancel()
                await task.value
                watchers.append(watcher)
            }
            return watchers
        }
        try await withDeadline("a thousand cancelled watchers to close their descriptors") {
            for watcher in watchers { await watcher.released() }
        }
        try await Self.storeQueueDrained(store)
        #expect(store.core.subscriberCount == 0)
        #expect(!store.core.isWatching)
        let after = Self.watchDescriptors(in: directory)
        #expect(
            after.count <= before.count,
            "one watcher holds \(cost); left open: \(after.filter { before[$0.key] != $0.value })")
        #expect(inotifyCount(after) == 1, "\(after)")
        let unwatched = await eventually { DirectoryWatches.count(of: directory.path) == 0 }
        #expect(unwatched, "the directory is still watched after the last cycle")
    }

    /// Watchers share the process's one inotify instance and one watch per
    /// directory; the directory's watch goes with its last watcher.
    @Test func aCancelledWatcherReleasesItsDirectoryWatch() async throws {
        let directory = try TemporaryDirectory()
        // A replica wait beside, as other suites run: its instance is its own.
        let registrations = try TemporaryDirectory()
        let beside = try RegistrationWatch(directory: registrations.path) {}
        defer { beside.cancel() }
        let first = try FileWatcher.start(path: directory.file("a.json").path) {}
        let second = try FileWatcher.start(path: directory.file("b.json").path) {}
        let descriptor = try #require(first.nativeDescriptor)
        #expect(second.nativeDescriptor == descriptor)
        #expect(openDescriptors()[descriptor] == "anon_inode:inotify")
        #expect(DirectoryWatches.count(of: directory.path) == 1)
        first.cancel()
        #expect(first.nativeDescriptor == nil)
        #expect(DirectoryWatches.count(of: directory.path) == 1)
        second.cancel()
        let unwatched = await eventually { DirectoryWatches.count(of: directory.path) == 0 }
        #expect(unwatched, "the directory is still watched after its last watcher was cancelled")
        #expect(openDescriptors()[descriptor] == "anon_inode:inotify", "the shared instance closed")
        #expect(inotifyCount(Self.watchDescriptors(in: directory)) == 1)
    }

    /// A store closed and opened again and again in one directory keeps the
    /// directory's one watch (no watch is removed and added again while it is
    /// in use within the linger), and the watch still goes after the last close.
    @Test func aDirectoryWatchReusedWhileLingeringIsKeptThenReleased() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.json").path
        let directoryPath = directory.path
        // Longer than the linger, so a removal comes due during the cycles.
        // On a thread of its own: a test run that keeps Swift's pool busy
        // could wake a task's sleep later than the linger.
        let cycled = await FileIntegrity.onThread(within: 60) {
            () -> Result<Set<String>, any Error> in
            Result {
                var watches: Set<String> = []
                let until = ContinuousClock.now + .milliseconds(1600)
                while ContinuousClock.now < until {
                    let watcher = try FileWatcher.start(path: path) {}
                    watches.formUnion(Self.watchNumbers(of: directoryPath))
                    watcher.cancel()
                    Thread.sleep(forTimeInterval: 0.04)
                }
                return watches
            }
        }
        let watches = try #require(cycled, "the cycles did not end within 60 s").get()
        #expect(watches.count == 1, "the directory was unwatched and watched again: \(watches)")
        let unwatched = await eventually { DirectoryWatches.count(of: directory.path) == 0 }
        #expect(unwatched, "the directory is still watched after its last watcher was cancelled")
    }

    /// The inotify watch numbers on the directory at `path`, in the
    /// instances `descriptors` (every instance in the process by default).
    private static func watchNumbers(of path: String, in descriptors: [Int32]? = nil) -> Set<String>
    {
        guard let stamp = try? Platform.fileStamp(path) else { return [] }
        let inode = "ino:" + String(stamp.inode, radix: 16) + " "
        let instances =
            descriptors
            ?? openDescriptors().filter { $0.value == "anon_inode:inotify" }.map(\.key)
        var numbers: Set<String> = []
        for descriptor in instances {
            let info =
                (try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8))
                ?? ""
            for line in info.split(separator: "\n")
            where line.hasPrefix("inotify wd:") && line.contains(inode) {
                numbers.insert(String(line.split(separator: " ")[1]))
            }
        }
        return numbers
    }

    private func inotifyCount(_ descriptors: [Int32: String]) -> Int {
        descriptors.values.filter { $0.contains("inotify") }.count
    }
}
