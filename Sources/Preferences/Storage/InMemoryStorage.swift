#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A backend that keeps the document in memory: for tests of code that uses
/// Preferences, and for settings that need not outlive the process.
///
/// Two stores built on the same `InMemoryStorage` object share one state
/// (as two handles on one file do, S9): a write through one is visible
/// through the other at once and reaches both stores' change feeds. Every
/// write — a store's, or one made directly with ``write(_:ifRevision:)`` as
/// another process would — calls every watcher. It keeps no history
/// archive, manifests or replicas, and has no permissions to narrow.
///
/// ```swift
/// let store = try await PreferencesStore(storage: InMemoryStorage())
/// try await store.set(.darkMode, true)
/// ```
public final class InMemoryStorage: PreferencesStorage {
    private struct State {
        var bytes: [UInt8]?
        var generation = 0
        var watchers: [Int: @Sendable (StorageWatchEvent) -> Void] = [:]
        var nextWatcher = 0
        var setAside: [String: [UInt8]] = [:]
    }

    private let state = Locked(State())
    private let name: String
    private let instance = UUID()

    /// Creates an empty backend, or one holding `bytes` (a file's contents).
    public init(name: String = "memory", bytes: [UInt8]? = nil) {
        self.name = name
        state.withLock { $0.bytes = bytes }
    }

    /// The name given at creation.
    public var location: String { name }
    /// Unique to this object: stores opened on it share one state; stores
    /// on another `InMemoryStorage`, even of the same name, do not.
    public var identity: String? { "memory:\(instance.uuidString)" }

    /// An open with ``identity``.
    public func beginOpening() -> StorageOpening { StorageOpening(identity: identity) }

    /// Reads are local and quick.
    public var tuning: StorageTuning { StorageTuning(readsAreLocal: true) }

    /// None: the document carries the history.
    public var historyArchive: (any HistoryArchive)? { nil }
    /// None.
    public var manifests: (any ManifestPublishing)? { nil }
    /// None.
    public var replicas: (any ReplicaRegistry)? { nil }
    /// None.
    public var privacy: (any StoragePrivacy)? { nil }

    /// The document as it would be on disk, or nil when empty.
    public var bytes: [UInt8]? { state.withLock { $0.bytes } }

    /// Calls watchers outside the lock, so one may read the backend.
    private func notify(_ watchers: [@Sendable (StorageWatchEvent) -> Void]) {
        for watcher in watchers { watcher(.changed(nil)) }
    }

    private func revision(_ state: State) -> StorageRevision {
        state.bytes == nil ? .absent : StorageRevision("memory-\(state.generation)")
    }

    /// The document and its revision.
    public func read() throws -> StoredContents {
        state.withLock { StoredContents(bytes: $0.bytes, revision: revision($0)) }
    }

    /// The current revision.
    public func currentRevision() throws -> StorageRevision {
        state.withLock { revision($0) }
    }

    /// Replaces the document if the revision is still `expected`, then
    /// calls every watcher.
    public func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        let outcome = state.withLock {
            state -> (StorageRevision, [@Sendable (StorageWatchEvent) -> Void])? in
            guard revision(state) == expected else { return nil }
            state.bytes = bytes
            state.generation += 1
            return (revision(state), Array(state.watchers.values))
        }
        guard let (written, watchers) = outcome else { return nil }
        notify(watchers)
        return written
    }

    /// Runs `body`; writes are already atomic.
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try body()
    }

    /// Keeps the bytes aside under `<name>.corrupt-<stamp>` (with a counter
    /// when that name is taken; see ``setAside``) and empties the document,
    /// if it still has `contents.revision`.
    public func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        let outcome = state.withLock {
            state -> (String, [@Sendable (StorageWatchEvent) -> Void])? in
            guard let bytes = state.bytes, revision(state) == contents.revision else { return nil }
            var place = "\(name).corrupt-\(stamp)"
            var attempt = 1
            while state.setAside[place] != nil {
                attempt += 1
                place = "\(name).corrupt-\(stamp)-\(attempt)"
            }
            state.setAside[place] = bytes
            state.bytes = nil
            state.generation += 1
            return (place, Array(state.watchers.values))
        }
        guard let (place, watchers) = outcome else { return nil }
        notify(watchers)
        return place
    }

    /// The documents ``setAsideCorrupt(_:stamp:)`` moved aside, by the name
    /// it returned.
    public var setAside: [String: [UInt8]] { state.withLock { $0.setAside } }

    /// Reports ``StorageWatchEvent/changed(_:)`` after every change of the
    /// document: each write and set-aside, whoever made it.
    public func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = onEvent
            return state.nextWatcher
        }
        return MemoryWatch(storage: self, id: id)
    }

    fileprivate func stopWatching(_ id: Int) {
        _ = state.withLock { $0.watchers.removeValue(forKey: id) }
    }

    /// The number of active watches (for tests of subscription clean-up).
    public var activeWatchCount: Int { state.withLock { $0.watchers.count } }
}

private struct MemoryWatch: StorageWatch {
    let storage: InMemoryStorage
    let id: Int
    func cancel() { storage.stopWatching(id) }
}
