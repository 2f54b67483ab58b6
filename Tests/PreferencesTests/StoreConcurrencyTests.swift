import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Synchronization
import Testing

@testable import Preferences

/// Wraps a backend and counts its writes.
final class CountingStorage: PreferencesStorage {
    let base: any PreferencesStorage
    let writes = Atomic<Int>(0)
    /// With `keepingWrites`, the bytes of every write, in order.
    let written = Locked<[[UInt8]]>([])
    private let keepingWrites: Bool
    init(_ base: any PreferencesStorage, keepingWrites: Bool = false) {
        self.base = base
        self.keepingWrites = keepingWrites
    }
    var location: String { base.location }
    var tuning: StorageTuning { base.tuning }
    var historyArchive: (any HistoryArchive)? { base.historyArchive }
    var manifests: (any ManifestPublishing)? { base.manifests }
    var replicas: (any ReplicaRegistry)? { base.replicas }
    var privacy: (any StoragePrivacy)? { base.privacy }
    func read() throws -> StoredContents { try base.read() }
    func currentRevision() throws -> StorageRevision { try base.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        writes.add(1, ordering: .relaxed)
        if keepingWrites { written.withLock { $0.append(bytes) } }
        return try base.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try base.withExclusiveAccess(body)
    }
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try base.setAsideCorrupt(contents, stamp: stamp)
    }
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        try base.watch(onEvent)
    }
}

@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 10))
struct StoreConcurrencyTests {
    @Test func concurrentSetsShareWritesAndAllLand() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = CountingStorage(FileStorage(fileURL: url))
        let store = try await PreferencesStore(storage: storage)
        // The first edit holds the write until the other 999 are queued, so
        // the test does not depend on how the tasks happen to be scheduled.
        let release = DispatchSemaphore(value: 0)
        let blocker = Task {
            try await store.edit { prefs in
                _ = release.wait(timeout: .now() + TestTime.scaled(seconds: 120))
                prefs[raw: "k0"] = 0
            }
        }
        let first = await eventually(seconds: 120) { store.core.queue.outstandingCount > 0 }
        #expect(first, "the first edit never reached the store's queue")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1..<1000 {
                group.addTask { try await store.edit { $0[raw: "k\(index)"] = .int(Int64(index)) } }
            }
            let queued = await eventually(seconds: 120) { store.pendingEditCount == 999 }
            #expect(queued, "only \(store.pendingEditCount) of 999 edits were queued")
            release.signal()
            try await group.waitForAll()
        }
        try await blocker.value
        #expect(store.snapshot.values.count == 1000)
        // The blocked write takes in every edit queued while it ran (or, at
        // most, leaves them to one more write): group commit (S4).
        let writes = storage.writes.load(ordering: .relaxed)
        #expect(
            writes <= 2, "1,000 sets, 999 of them queued behind one write, took \(writes) writes")
        #expect(try fileSnapshot(url).values.count == 1000)
    }

    /// Opening runs on the caller's thread only when the store has nothing
    /// else to do: an open that comes while a write to the same file is
    /// under way waits for it and sees its result.
    @Test func anOpenDuringAWriteToTheSameFileSeesThatWrite() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let first = try await PreferencesStore(fileURL: url)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // The transform waits on the store's queue, never on Swift's pool.
        let write = Task {
            try await first.edit { prefs in
                started.signal()
                _ = release.wait(timeout: .now() + TestTime.scaled(seconds: 120))
                prefs[.counter] = 7
            }
        }
        // Waited for on a thread of its own: a busy test run can keep Swift's
        // pool from starting `write` for a while, and polling from the pool
        // would wait for a thread as well.
        let didStart = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: started.wait(timeout: .now() + TestTime.scaled(seconds: 120))
                        == .success)
            }.start()
        }
        #expect(didStart, "the edit's transform did not run within 120 s")
        // The open is known to be waiting behind the write (the store's
        // queue holds both) before the write is let go.
        let opening = Task { try await PreferencesStore(fileURL: url) }
        let waiting = await eventually(seconds: 120) { first.core.queue.outstandingCount >= 2 }
        #expect(waiting, "the second open never queued behind the write")
        release.signal()
        let second = try await opening.value
        #expect(second[.counter] == 7, "the open returned before the write it came after")
        try await write.value
    }

    /// Reads (S1) never see a value go back while writes land; the reader
    /// runs on a thread of its own and must have seen each round's end.
    @Test func incrementsWithAConcurrentReaderNeverGoDown() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let seen = Locked((last: 0, wentDown: false, stop: false))
        Thread {
            while !seen.value.stop {
                let value = store[.counter]
                seen.withLock { state in
                    if value < state.last { state.wentDown = true }
                    state.last = value
                }
            }
        }.start()
        defer { seen.withLock { $0.stop = true } }
        for round in 1...10 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { try await store.edit { $0[.counter] += 1 } } }
                try await group.waitForAll()
            }
            let caughtUp = await eventually(seconds: 120) { seen.value.last == round * 100 }
            #expect(caughtUp, "the reader never saw \(round * 100); last saw \(seen.value.last)")
        }
        #expect(seen.value.wentDown == false, "a read saw the counter go down")
        #expect(store[.counter] == 1000)
    }

    @Test func acknowledgedSetSurvivesKillNine() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let child = try RunningProcess("prefs-harness", ["set", url.path, "counter", "4242"])
        #expect(try await child.nextLine() == "ok")
        child.kill(SIGKILL)
        _ = try await child.exit()
        let store = try await PreferencesStore(fileURL: url)
        #expect(store[.counter] == 4242)
    }

    @Test func fourProcessesIncrementingLoseNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let children = try (0..<4).map { _ in
            try RunningProcess("prefs-harness", ["increment", url.path, "counter", "200"])
        }
        for child in children {
            #expect(try await child.nextLine() == "done")
            #expect(try await child.exit() == 0)
        }
        let store = try await PreferencesStore(fileURL: url)
        #expect(store[.counter] == 800)
    }

    @Test func processesAndThisProcessIncrementTogether() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let children = try (0..<2).map { _ in
            try RunningProcess("prefs-harness", ["increment", url.path, "counter", "150"])
        }
        for _ in 0..<150 { try await store.edit { $0[.counter] += 1 } }
        for child in children { #expect(try await child.exit() == 0) }
        try await store.edit { $0[.counter] += 0 }
        #expect(store[.counter] == 450)
    }
}
