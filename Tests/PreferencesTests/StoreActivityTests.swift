import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// What a store tells a service's metrics and its secret handling: open
/// feeds, retried write conflicts, and the secret keys it knows.
@Suite(.scaledTimeLimit(minutes: 2))
struct StoreActivityTests {
    @Test func activityCountsTheFeedsOpenNow() async throws {
        let store = try await PreferencesStore(storage: InMemoryStorage())
        let before = store.activity.feedSubscribers
        let feeds = [store.changes(), store.changes()]
        #expect(store.activity.feedSubscribers == before + 2)
        var iterator: AsyncStream<PreferencesSnapshot>.Iterator? = feeds[0].makeAsyncIterator()
        _ = await iterator?.next()
        iterator = nil
        // Dropping the feeds ends their subscriptions.
        _ = consume feeds
        #expect(
            await eventually { store.activity.feedSubscribers == before },
            "the ended feeds' subscriptions to go")
    }

    @Test func aWriteThatLosesItsCompareAndSwapIsCountedAsRetried() async throws {
        let storage = LosingStorage(InMemoryStorage())
        let store = try await PreferencesStore(storage: storage)
        try await store.edit { $0[raw: "port"] = 8080 }
        #expect(store.activity.retriedWriteConflicts == 0)
        storage.arm(losses: 2)
        try await store.edit { $0[raw: "workers"] = 4 }
        #expect(store.storedValue(forKey: "workers") == 4)
        #expect(store.activity.retriedWriteConflicts == 2)
        try await store.edit { $0[raw: "workers"] = 5 }
        #expect(store.activity.retriedWriteConflicts == 2, "a write that won at once")
    }

    @Test func keysTreatedAsSecretStayOutOfTheHistory() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        #expect(store.secretKeys.isEmpty)
        store.treatAsSecret(["db.password"])
        #expect(store.secretKeys == ["db.password"])
        #expect(store.isSecret("db.password"))
        try await store.edit { $0[raw: "db.password"] = "hunter2" }
        #expect(store.snapshot.secretKeys == ["db.password"])
        let entry = try #require(try await store.history().entries.last)
        #expect(entry.changes["db.password"] == .secretChange)
        #expect(!entry.description.contains("hunter2"))
        // Another handle that was never told learns it from the document.
        let reader = try await PreferencesStore(
            fileURL: directory.file("service.json"), liveReads: false)
        #expect(reader.secretKeys.contains("db.password"))
    }
}

/// A backend whose next `losses` writes, once armed, lose their
/// compare-and-swap to a rewrite of what is stored made just before them,
/// as another writer's would.
private final class LosingStorage: PreferencesStorage {
    let base: InMemoryStorage
    private let remaining: Locked<Int>

    init(_ base: InMemoryStorage) {
        self.base = base
        self.remaining = Locked(0)
    }

    /// Makes the next `losses` writes lose.
    func arm(losses: Int) { remaining.withLock { $0 = losses } }

    var location: String { base.location }
    var tuning: StorageTuning { base.tuning }
    var historyArchive: (any HistoryArchive)? { base.historyArchive }
    var manifests: (any ManifestPublishing)? { base.manifests }
    var replicas: (any ReplicaRegistry)? { base.replicas }
    var privacy: (any StoragePrivacy)? { base.privacy }
    func read() throws -> StoredContents { try base.read() }
    func currentRevision() throws -> StorageRevision { try base.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        let lose = remaining.withLock { remaining -> Bool in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        // Another writer rewrites what is stored: the revision moves on.
        if lose, let current = try? base.read(), let stored = current.bytes {
            _ = try base.write(stored, ifRevision: current.revision)
        }
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
