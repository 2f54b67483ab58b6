import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Many subscribers, and what is left once they are gone (C5, <doc:ObservingChanges>). The
/// descriptor counts are of the whole process, so these run one at a time;
/// other suites may open files and pipes meanwhile (69 more in one busy
/// run), hence the allowance, which is still far below the thousand that
/// one leaked descriptor per watch would add up to. Descriptors on the
/// test's own directory are counted exactly.
@Suite(.serialized) struct ChangeFeedLifecycleTests {
    static let allowance = 256

    /// Open descriptors that refer to something inside `directory`.
    static func descriptors(in directory: TemporaryDirectory) -> [String] {
        let root = directory.url.resolvingSymlinksInPath().path
        return openDescriptors().values.filter { $0 == root || $0.hasPrefix(root + "/") }
    }

    @Test func aThousandSubscribersAllSeeAnExternalWriteAndLeaveNothingBehind() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        let before = openDescriptors()
        let ownBefore = Self.descriptors(in: directory)

        let recorders = (0..<1000).map { _ in FeedRecorder(store.changes(.counter)) }
        #expect(store.core.subscriberCount == 1000)
        let watcher = try #require(store.core.state.withLock { $0.watching.watch } as? FileWatcher)
        let child = try RunningProcess("prefs-harness", ["set", url.path, "counter", "77"])
        #expect(try await child.nextLine() == "ok")
        child.kill()
        _ = try await child.exit()
        var missing = 0
        for recorder in recorders where await recorder.next(77) == nil { missing += 1 }
        #expect(missing == 0)

        for recorder in recorders { await recorder.cancel() }
        #expect(store.core.subscriberCount == 0)
        #expect(!store.core.isWatching)
        await watcher.released()
        let after = openDescriptors()
        #expect(
            after.count < before.count + Self.allowance,
            "\(before.count) → \(after.count) descriptors")
        #expect(inotifyCount(after) < inotifyCount(before) + 32)
        let ownAfter = Self.descriptors(in: directory)
        #expect(ownAfter.count <= ownBefore.count, "left open: \(ownAfter)")
    }

    /// Each cycle starts and stops the watcher: a leak per watch would show
    /// as a thousand descriptors.
    @Test func aThousandSubscribeAndCancelCyclesLeaveNoDescriptorBehind() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(.counter, 1)
        let before = openDescriptors()
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
            // Half the feeds end by cancelling their task, half are cancelled
            // before their first read of a new value.
            if cycle.isMultiple(of: 2) { await Task.yield() }
            task.cancel()
            await task.value
            watchers.append(watcher)
        }
        for watcher in watchers { await watcher.released() }
        #expect(store.core.subscriberCount == 0)
        #expect(!store.core.isWatching)
        let after = openDescriptors()
        #expect(
            after.count < before.count + Self.allowance,
            "\(before.count) → \(after.count) descriptors")
        #expect(inotifyCount(after) < inotifyCount(before) + 32)
    }

    /// Watchers share the process's one inotify instance and one watch per
    /// directory; the directory's watch goes with its last watcher.
    @Test func aCancelledWatcherReleasesItsDirectoryWatch() async throws {
        let directory = try TemporaryDirectory()
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
        #expect(inotifyCount(openDescriptors()) == 1)
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

    /// The inotify watch numbers on the directory at `path`.
    private static func watchNumbers(of path: String) -> Set<String> {
        guard let stamp = try? Platform.fileStamp(path) else { return [] }
        let inode = "ino:" + String(stamp.inode, radix: 16) + " "
        var numbers: Set<String> = []
        for (descriptor, target) in openDescriptors() where target == "anon_inode:inotify" {
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
