import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Live reads (S16, <doc:StoreGuarantees>): an open store keeps itself current, with one
/// directory watch per process however many stores are open, on a bounded
/// set of threads.
@Suite(.scaledTimeLimit(minutes: 5)) struct LiveReadsTests {
    private struct Counted: PreferencesRecord {
        var counter = 0
    }

    @Test func readsSeeAnotherProcessesWriteWithoutReload() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let record = try await RecordStore<Counted>(fileURL: url)
        #expect(store[.counter] == 0)

        let result = try await runChild("prefs", ["--file", url.path, "set", "counter", "5"])
        #expect(result.status == 0, "prefs set: \(result.standardError)")
        let seen = await eventually { store[.counter] == 5 }
        #expect(seen, "store[.counter] is still \(store[.counter]) 10 s after `prefs set` returned")
        #expect(store.snapshot.value(forKey: "counter") == .int(5))
        #expect(record.value.counter == 5)

        // A feed opened now starts from the live state.
        var feed = store.changes(.counter).makeAsyncIterator()
        #expect(try await feed.next("the current value, 5") == 5)
    }

    /// With live reads off, reads stay as they were until `reload()`. The
    /// proof that the write would have been noticed: a live store on another
    /// file of the same directory sees a write made after it.
    @Test func withLiveReadsOffReadsChangeOnlyOnReload() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        #expect(!store.core.isWatching)
        let neighbour = try await PreferencesStore(fileURL: directory.file("other.json"))

        var result = try await runChild("prefs", ["--file", url.path, "set", "counter", "5"])
        #expect(result.status == 0, "prefs set: \(result.standardError)")
        result = try await runChild("prefs", ["--file", neighbour.location, "set", "counter", "6"])
        #expect(result.status == 0, "prefs set: \(result.standardError)")
        let seen = await eventually { neighbour[.counter] == 6 }
        #expect(seen, "the live neighbour never saw its write")
        #expect(store[.counter] == 0)

        try await store.reload()
        #expect(store[.counter] == 5)
    }

    /// The store reads what its watch reports before any later work of its
    /// own: once the work queued after the watch's event has run, a read
    /// shows the other writer's value. The in-memory backend calls its
    /// watchers within the write, so no wait is involved.
    @Test func aChangeTheWatchReportsIsReadBeforeTheStoresNextWork() async throws {
        let storage = InMemoryStorage()
        let store = try await PreferencesStore(storage: storage)
        #expect(store[.counter] == 0)
        // Another writer's document, written to the backend directly.
        let elsewhere = InMemoryStorage()
        let writer = try await PreferencesStore(storage: elsewhere, liveReads: false)
        try await writer.set(.counter, 9)
        let bytes = try #require(elsewhere.bytes)
        let written = try storage.write(bytes, ifRevision: try storage.currentRevision())
        #expect(written != nil, "the direct write lost its compare-and-swap")
        await store.core.queue.run {}
        #expect(store[.counter] == 9, "the store did not read the change its watch reported")
    }

    @Test func aStoreInAMissingDirectorySeesTheDirectoryAndFileAppear() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("later/prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let result = try await runChild("prefs", ["--file", url.path, "set", "counter", "9"])
        #expect(result.status == 0, "prefs set: \(result.standardError)")
        let seen = await eventually { store[.counter] == 9 }
        #expect(seen, "store[.counter] is still \(store[.counter]) after the directory appeared")
        // Polling gave way to the directory watch once the directory existed.
        let watcher = try #require(store.core.state.withLock { $0.watching.watch } as? FileWatcher)
        let native = await eventually { !watcher.usesPolling }
        #expect(native, "the store still polls although its directory exists")
    }

    /// A watched directory that is removed puts the store on polling, which
    /// notices the directory and file coming back and hands over to the
    /// directory watch again.
    @Test(.enabled(if: hasProc, "counts the directory's watches in /proc/self/fdinfo"))
    func aRemovedDirectoryIsPolledUntilItComesBackThenWatchedAgain() async throws {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("conf")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let watcher = try #require(store.core.state.withLock { $0.watching.watch } as? FileWatcher)
        #expect(!watcher.usesPolling)

        try FileManager.default.removeItem(at: folder)
        let polling = await eventually { watcher.usesPolling }
        #expect(polling, "the store kept its watch on a removed directory")

        // `prefs set` creates the directory again.
        var result = try await runChild("prefs", ["--file", url.path, "set", "counter", "3"])
        #expect(result.status == 0, "prefs set: \(result.standardError)")
        let seen = await eventually { store[.counter] == 3 }
        #expect(seen, "store[.counter] is \(store[.counter]) after the directory came back")
        let native = await eventually { !watcher.usesPolling }
        #expect(native, "the store still polls although its directory is back")
        #expect(DirectoryWatches.count(of: folder.path) == 1)

        result = try await runChild("prefs", ["--file", url.path, "set", "counter", "4"])
        #expect(result.status == 0, "prefs set: \(result.standardError)")
        let again = await eventually { store[.counter] == 4 }
        #expect(
            again, "store[.counter] is \(store[.counter]) after a write to the watched directory")
    }

    static let hasProc = FileManager.default.fileExists(atPath: "/proc/self/fdinfo")

    @Test(.enabled(if: hasProc, "counts the process's inotify watches in /proc/self/fdinfo"))
    func droppingEveryHandleReleasesTheCoreAndItsWatch() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        weak var core: StoreCore?
        do {
            let first = try await PreferencesStore(fileURL: url)
            let second = try await PreferencesStore(fileURL: url)
            #expect(first.core === second.core)
            core = first.core
            #expect(first.core.isWatching)
            #expect(DirectoryWatches.count(of: directory.path) == 1)
            try await first.set(.counter, 1)
            #expect(second[.counter] == 1)
        }
        // A watcher callback may hold the core for a moment.
        let released = await eventually { core == nil }
        #expect(released, "the store's state outlived every handle on it")
        // The kernel's watch lingers a moment for a store reopened there.
        let unwatched = await eventually { DirectoryWatches.count(of: directory.path) == 0 }
        #expect(unwatched, "the directory is still watched after every store on it is gone")
    }
}

/// Real processes: a service that only reads, and many stores in one process.
/// The limit leaves room for the reader's own watchdog (15 minutes, for a
/// loaded machine under ThreadSanitizer).
@Suite(.takesTurns(.processes), .serialized, .scaledTimeLimit(minutes: 20))
struct LiveReadsProcessTests {
    static let rounds = 100

    /// A service reading `store[.counter]` on a loop (no feed, no reload)
    /// sees each `prefs set` of another process. The delay from `prefs set`
    /// returning to the reader seeing the value is printed (S16,
    /// <doc:StoreGuarantees>; P5, <doc:Performance>).
    @Test func aServiceThatOnlyReadsSeesEachPrefsSet() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let reader = try RunningProcess("prefs-harness", ["read-loop", url.path, "counter"])
        // Generous: under ThreadSanitizer on a busy machine one `prefs set`
        // launch can take seconds, and each line still has its own deadline.
        let watchdog = Watchdog(reader, seconds: 900)
        defer {
            watchdog.cancel()
            reader.kill()
        }
        let outcome = Locked<(delays: [UInt64], fromLaunch: [UInt64], failure: String?)>(
            ([], [], nil))
        await onThreads(1) { _ in
            guard (try? reader.readLine()) == "ready 0" else {
                outcome.withLock { $0.failure = "the reader did not start" }
                return
            }
            for round in 1...Self.rounds {
                let launched = DispatchTime.now().uptimeNanoseconds
                let result = try? ChildCommand(
                    "prefs", ["--file", url.path, "set", "counter", "\(round)"]
                ).runBlocking()
                let returned = DispatchTime.now().uptimeNanoseconds
                guard result?.status == 0 else {
                    outcome.withLock {
                        $0.failure = "prefs set failed: \(String(describing: result))"
                    }
                    return
                }
                guard let line = (try? reader.readLine()) else {
                    outcome.withLock {
                        $0.failure = "round \(round): the reader never saw the value"
                    }
                    return
                }
                let words = line.split(separator: " ")
                guard words.count == 3, words[0] == "seen", words[1] == "\(round)",
                    let seen = UInt64(words[2])
                else {
                    outcome.withLock { $0.failure = "round \(round): unexpected line '\(line)'" }
                    return
                }
                outcome.withLock {
                    $0.delays.append(seen > returned ? seen - returned : 0)
                    $0.fromLaunch.append(seen - launched)
                }
            }
        }
        let (delays, fromLaunch, failure) = outcome.withLock {
            ($0.delays, $0.fromLaunch, $0.failure)
        }
        #expect(failure == nil, "\(failure ?? "")\(watchdog.killed.map { " (\($0))" } ?? "")")
        #expect(delays.count == Self.rounds)
        guard !delays.isEmpty else { return }
        func summary(_ samples: [UInt64]) -> String {
            let sorted = samples.sorted()
            func ms(_ nanoseconds: UInt64) -> String {
                String(format: "%.2f ms", Double(nanoseconds) / 1e6)
            }
            return "p50 \(ms(sorted[sorted.count / 2])), max \(ms(sorted[sorted.count - 1]))"
        }
        print(
            "live read of another process's `prefs set` (\(delays.count) rounds): "
                + "after it returned \(summary(delays)) (0 when seen before it exited); "
                + "from its launch \(summary(fromLaunch))")
    }

    /// 500 stores in 50 directories, read without feeds (live reads) and with
    /// a feed each: one inotify instance, few threads, and every store live.
    @Test(
        .enabled(if: LiveReadsTests.hasProc, "counts inotify instances and threads in /proc/self"),
        arguments: [false, true])
    func fiveHundredStoresInFiftyDirectoriesStayOnOneInotifyInstance(feeds: Bool) async throws {
        let directory = try TemporaryDirectory()
        let child = try RunningProcess(
            "prefs-harness",
            ["many-stores", directory.path, "500", "50"] + (feeds ? ["feeds"] : []))
        defer { child.kill() }
        let line = try #require(
            try await child.nextLine(timeout: .seconds(120)), "the harness printed nothing")
        print("500 stores in 50 directories\(feeds ? " with feeds" : ""): \(line)")
        let census = try #require(Census(line), "not a census: '\(line)'")
        #expect(census.inotifyInstances == 1, "\(line)")
        #expect(census.threads < 24, "\(line)")
        // The first store (dir-0) and the last (dir-49).
        for (index, value) in [(0, 11), (499, 12)] {
            let file = directory.url.appendingPathComponent("dir-\(index % 50)/store-\(index).json")
            let result = try await runChild(
                "prefs", ["--file", file.path, "set", "counter", "\(value)"])
            #expect(result.status == 0, "prefs set: \(result.standardError)")
            try await child.lines.expectLine("seen \(index) \(value)")
        }
    }

    /// Opening, watching and dropping 1,500 stores one after another leaves
    /// only a few threads.
    @Test(
        .enabled(if: LiveReadsTests.hasProc, "counts inotify instances and threads in /proc/self"))
    func fifteenHundredStoresOpenedAndDroppedLeaveFewThreads() async throws {
        let directory = try TemporaryDirectory()
        let child = try RunningProcess("prefs-harness", ["churn", directory.path, "1500"])
        defer { child.kill() }
        let line = try #require(
            try await child.nextLine(timeout: .seconds(120)), "the harness printed nothing")
        print("1,500 stores opened, watched and dropped: \(line)")
        let census = try #require(Census(line), "not a census: '\(line)'")
        #expect(census.inotifyInstances <= 1, "\(line)")
        #expect(census.threads < 24, "\(line)")
        #expect(try await child.exit(timeout: .seconds(60)) == 0, "prefs-harness churn failed")
    }
}

/// What the harness's `many-stores` and `churn` print: "inotify I threads T".
private struct Census {
    let inotifyInstances: Int
    let threads: Int

    /// nil unless `line` is exactly that, with two numbers.
    init?(_ line: String) {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 4, words[0] == "inotify", words[2] == "threads",
            let instances = Int(words[1]), let threads = Int(words[3])
        else { return nil }
        self.inotifyInstances = instances
        self.threads = threads
    }
}

/// Kills a child that has not finished by a deadline (scaled), so a test
/// waiting on its output fails instead of hanging; ``killed`` then says so
/// for the test's failure.
final class Watchdog: Sendable {
    private let state = Locked((cancelled: false, killed: nil as String?))

    init(_ child: RunningProcess, seconds: Int) {
        let state = state
        let limit = TestTime.scaled(seconds: Double(seconds))
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
            let kill = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.killed = "\(child.lines.name) was killed at its deadline, \(limit) s"
                return true
            }
            if kill { child.kill() }
        }
    }

    func cancel() { state.withLock { $0.cancelled = true } }

    /// What the watchdog killed, if it did.
    var killed: String? { state.withLock { $0.killed } }
}

/// The inotify watches this process holds, from /proc/self/fdinfo.
enum DirectoryWatches {
    /// How many watches are on the directory at `path` (by inode).
    static func count(of path: String) -> Int {
        guard let stamp = try? Platform.fileStamp(path) else { return 0 }
        let inode = "ino:" + String(stamp.inode, radix: 16) + " "
        var total = 0
        for (descriptor, target) in openDescriptors() where target == "anon_inode:inotify" {
            let info =
                (try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8))
                ?? ""
            total +=
                info.split(separator: "\n").filter {
                    $0.hasPrefix("inotify wd:") && $0.contains(inode)
                }.count
        }
        return total
    }
}
