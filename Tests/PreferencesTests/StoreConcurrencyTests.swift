import Foundation
import PreferencesTestSupport
import Synchronization
import Testing

@testable import Preferences

/// Wraps a backend and counts its writes.
final class CountingStorage: PreferencesStorage {
    let base: any PreferencesStorage
    let writes = Atomic<Int>(0)
    /// With `keepingWrites`, the bytes of every write, in order.
    let written = Mutex<[[UInt8]]>([])
    private let keepingWrites: Bool
    init(_ base: any PreferencesStorage, keepingWrites: Bool = false) {
        self.base = base
        self.keepingWrites = keepingWrites
    }
    var location: String { base.location }
    var identity: String? { nil }
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

@Suite struct StoreConcurrencyTests {
    @Test func concurrentSetsShareWritesAndAllLand() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = CountingStorage(FileStorage(fileURL: url))
        let store = try await PreferencesStore(storage: storage)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<1000 {
                group.addTask { try await store.edit { $0[raw: "k\(index)"] = .int(Int64(index)) } }
            }
            try await group.waitForAll()
        }
        #expect(store.snapshot.values.count == 1000)
        let writes = storage.writes.load(ordering: .relaxed)
        #expect(writes < 1000, "group commit should coalesce: \(writes) writes for 1000 sets")
        let reopened = try StoreDocument.decode(
            Array(try Data(contentsOf: url)), file: url.path, limits: PreferencesLimits())
        #expect(reopened.values.count == 1000)
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
                _ = release.wait(timeout: .now() + 10)
                prefs[.counter] = 7
            }
        }
        // Waited for on a thread of its own: a busy test run can keep Swift's
        // pool from starting `write` for a while, and polling from the pool
        // would wait for a thread as well.
        let didStart = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: started.wait(timeout: .now() + 120) == .success)
            }.start()
        }
        #expect(didStart, "the edit's transform did not run within 120 s")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { release.signal() }
        let second = try await PreferencesStore(fileURL: url)
        #expect(second[.counter] == 7, "the open returned before the write it came after")
        try await write.value
    }

    @Test func incrementsWithAConcurrentReaderNeverGoDown() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let reader = Task {
            var last = 0
            var wentDown = false
            while !Task.isCancelled {
                let value = store[.counter]
                if value < last { wentDown = true }
                last = value
                await Task.yield()
            }
            return wentDown
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask { for _ in 0..<100 { try await store.edit { $0[.counter] += 1 } } }
            }
            try await group.waitForAll()
        }
        reader.cancel()
        #expect(await reader.value == false)
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
