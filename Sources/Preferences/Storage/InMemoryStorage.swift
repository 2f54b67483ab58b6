import Synchronization

/// A backend that keeps the document in memory: for tests of code that uses
/// Preferences, and for settings that need not outlive the process.
///
/// Two stores built on the same `InMemoryStorage` object share one state,
/// and writes to it are seen by every store watching it.
///
/// ```swift
/// let store = try await PreferencesStore(storage: InMemoryStorage())
/// try await store.set(.darkMode, true)
/// ```
public final class InMemoryStorage: PreferencesStorage {
    private struct State {
        var bytes: [UInt8]?
        var generation = 0
        var watchers: [Int: @Sendable () -> Void] = [:]
        var nextWatcher = 0
        var setAside: [String: [UInt8]] = [:]
    }

    private let state = Mutex(State())
    private let name: String

    /// Creates an empty backend, or one holding `bytes` (a file's contents).
    public init(name: String = "memory", bytes: [UInt8]? = nil) {
        self.name = name
        state.withLock { $0.bytes = bytes }
    }

    /// The name given at creation.
    public var location: String { name }
    /// nil: stores share state only by sharing this object.
    public var identity: String? { nil }

    /// The document as it would be on disk, or nil when empty.
    public var bytes: [UInt8]? { state.withLock { $0.bytes } }

    /// Replaces the document as another process would, and notifies watchers.
    public func replaceExternally(with bytes: [UInt8]?) {
        let watchers = state.withLock { state in
            state.bytes = bytes
            state.generation += 1
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher() }
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

    /// Replaces the document if the revision is still `expected`.
    public func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        state.withLock { state in
            guard revision(state) == expected else { return nil }
            state.bytes = bytes
            state.generation += 1
            return revision(state)
        }
    }

    /// Runs `body`; writes are already atomic.
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try body()
    }

    /// Keeps the bytes aside under `<name>.corrupt-<stamp>` and empties the document.
    public func setAsideCorrupt(stamp: String) throws -> String {
        state.withLock { state in
            let place = "\(name).corrupt-\(stamp)"
            state.setAside[place] = state.bytes
            state.bytes = nil
            state.generation += 1
            return place
        }
    }

    /// Calls `onChange` after each ``replaceExternally(with:)``.
    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = onChange
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
