/// Ending a store's use gracefully (<doc:StoreGuarantees>): a service
/// stopping under SIGTERM closes its store, so that it stops being a
/// replica at once rather than when it is found gone.
extension PreferencesStore {
    /// Closes this handle: ends every change feed it made, stops following
    /// the file or key for it, waits for the writes it started, and — when
    /// it is the last handle with live reads on this store in the process —
    /// removes the process's replica registration before returning (the
    /// registration file removed; on etcd, its lease revoked), so that
    /// `prefs replicas` no longer lists it and `prefs set --wait` no longer
    /// waits for it.
    ///
    /// Calling it again waits for the first close and changes nothing.
    /// Afterwards every call of this handle that reads from or writes to
    /// the backend throws ``PreferencesError/closed(location:)``, a new
    /// change feed ends at once, and plain reads (`store[key]`,
    /// ``snapshot``) keep answering the last state. Other handles on the
    /// same store stay open.
    ///
    /// ```swift
    /// let store = try await PreferencesStore(suite: "com.example.app")
    /// defer { Task { await store.close() } }
    /// ```
    public func close() async {
        let liveReader = self.liveReader
        let core = self.core
        let closing = handle.close {
            // Writes already asked for come first: nothing is cut short.
            await core.queue.run {
                // Off the cooperative pool: removing the registration may
                // wait for a cluster.
                liveReader?.end(waiting: true)
            }
        }
        await closing.value
    }

    /// Throws ``PreferencesError/closed(location:)`` once ``close()`` began.
    func checkOpen() throws {
        if handle.isClosed { throw PreferencesError.closed(location: location) }
    }

    /// Ends `continuation` when this handle closes, or at once when it has;
    /// `onTermination` runs when the feed ends, however it ends.
    func track<Element>(
        _ continuation: AsyncStream<Element>.Continuation,
        onTermination: @escaping @Sendable () -> Void
    ) {
        guard let token = handle.track({ continuation.finish() }) else {
            continuation.onTermination = { _ in onTermination() }
            continuation.finish()
            return
        }
        let handle = self.handle
        continuation.onTermination = { _ in
            handle.untrack(token)
            onTermination()
        }
    }
}

extension AsyncStream {
    /// A feed that has ended: what a closed handle makes.
    static var finished: AsyncStream<Element> { AsyncStream { $0.finish() } }
}

/// A handle's own state: open or closed, and how to end the feeds it made.
final class StoreHandle: Sendable {
    private struct State {
        var closing: Task<Void, Never>?
        var feeds: [UInt64: @Sendable () -> Void] = [:]
        var nextFeed: UInt64 = 0
    }
    private let state = Locked(State())

    var isClosed: Bool { state.withLock { $0.closing != nil } }

    /// Keeps `finish` to end a feed when the handle closes; nil when it has
    /// closed already.
    func track(_ finish: @escaping @Sendable () -> Void) -> UInt64? {
        state.withLock { state in
            guard state.closing == nil else { return nil }
            state.nextFeed += 1
            state.feeds[state.nextFeed] = finish
            return state.nextFeed
        }
    }

    func untrack(_ token: UInt64) {
        _ = state.withLock { $0.feeds.removeValue(forKey: token) }
    }

    /// Marks the handle closed and ends its feeds, then runs `rest`, once:
    /// every call returns the same task.
    func close(_ rest: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        let (task, feeds) = state.withLock { state -> (Task<Void, Never>, [@Sendable () -> Void]) in
            if let closing = state.closing { return (closing, []) }
            let task = Task { await rest() }
            state.closing = task
            defer { state.feeds = [:] }
            return (task, Array(state.feeds.values))
        }
        for finish in feeds { finish() }
        return task
    }
}
