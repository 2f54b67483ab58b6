/// The storage's watch, live reads and the change feed's subscribers (S16,
/// <doc:StoreGuarantees>; C1–C6, <doc:ObservingChanges>).
///
/// The storage is watched while someone needs it: a handle with live reads
/// (a ``LiveReader``) or a subscriber. Every change the watch reports makes
/// the store re-read on its queue and publish what changed.
extension StoreCore {
    /// A change feed's receiver of new states, with their generation.
    struct Subscriber: Sendable {
        let deliver: @Sendable (PreferencesSnapshot, UInt64) -> Void
    }

    /// Who needs the storage watched, and the watch (``State/watching``).
    struct Watching: Sendable {
        var subscribers: [UInt64: Subscriber] = [:]
        var lastSubscriberID: UInt64 = 0
        var watch: (any StorageWatch)?
        /// Open handles with live reads on.
        var liveReaders = 0
        /// Failed reloads in a row after the watch signalled a change, and
        /// whether a retry is scheduled.
        var retries = 0
        var retryPending = false

        /// Whether someone needs the storage watched.
        var isWanted: Bool { liveReaders > 0 || !subscribers.isEmpty }
    }

    /// Registers a subscriber, delivers the current state to it, and starts
    /// the watch if nobody needed it yet. Returns the id for
    /// ``unsubscribe(_:)``.
    func subscribe(_ deliver: @escaping @Sendable (PreferencesSnapshot, UInt64) -> Void) -> UInt64 {
        let (id, snapshot, generation, start) = state.withLock { state in
            state.watching.lastSubscriberID += 1
            let id = state.watching.lastSubscriberID
            let start = !state.watching.isWanted
            state.watching.subscribers[id] = Subscriber(deliver: deliver)
            return (id, state.current.snapshot, state.current.generation, start)
        }
        deliver(snapshot, generation)
        if start { startWatching(catchingUp: true) }
        return id
    }

    func unsubscribe(_ id: UInt64) {
        state.withLock { $0.watching.subscribers[id] = nil }
        stopWatchingIfUnneeded()
    }

    /// Counts a handle with live reads; the first starts the watch. The
    /// caller loads right after, so there is nothing to catch up.
    fileprivate func addLiveReader() {
        let start = state.withLock { state in
            defer { state.watching.liveReaders += 1 }
            return !state.watching.isWanted
        }
        if start { startWatching(catchingUp: false) }
    }

    fileprivate func removeLiveReader(waiting: Bool) {
        let last = state.withLock { state in
            state.watching.liveReaders -= 1
            return state.watching.liveReaders == 0
        }
        if last { endReplica(waiting: waiting) }
        stopWatchingIfUnneeded()
    }

    private func stopWatchingIfUnneeded() {
        let watch = state.withLock { state -> (any StorageWatch)? in
            guard !state.watching.isWanted else { return nil }
            defer { state.watching.watch = nil }
            return state.watching.watch
        }
        watch?.cancel()
    }

    private func startWatching(catchingUp: Bool) {
        let watch = try? storage.watch { [weak self] event in
            guard let self else { return }
            switch event {
            case .changed(let contents):
                self.queue.submit { self.reloadFromWatcher(contents) }
            case .interrupted(let error):
                self.queue.submit { self.watchInterrupted(error) }
            }
        }
        let stale = state.withLock { state -> (any StorageWatch)? in
            // Everyone may have gone while the watch was starting.
            if !state.watching.isWanted || state.watching.watch != nil { return watch }
            state.watching.watch = watch
            return nil
        }
        stale?.cancel()
        // Catch a write that happened before the watch began.
        if catchingUp { queue.submit { self.reloadFromWatcher() } }
    }

    /// Lists an interrupted watch among the problems; the state stays as last known.
    private func watchInterrupted(_ error: PreferencesError) {
        changeProblems {
            $0.problems.watch = PreferencesProblem(
                key: nil, message: "\(error.description); showing the last known values")
        }
    }

    /// Re-reads after a change signalled by the watch. Errors are kept as
    /// problems; the feed and the last good state stay. A reload that failed
    /// on an I/O error (a file briefly unreadable, a cluster without a
    /// leader) is tried again, after a pause growing from 50 ms to 2 s, for
    /// as long as the store is watched: the last change before a quiet spell
    /// is never left unread.
    func reloadFromWatcher(_ watched: StoredContents? = nil) {
        do {
            changeProblems { $0.problems.watch = nil }
            // The watch's contents are used only while they are the newest
            // the backend knows; an older event (overtaken by our own write)
            // must not roll the state back, so then read.
            if let watched, try storage.currentRevision() == watched.revision {
                if watched.revision != state.withLock({ $0.current.revision }) {
                    try apply(watched, policy: nil)
                }
            } else {
                try refreshIfChanged(policy: nil)
            }
            // Read through, or found unchanged: an earlier failure is over.
            changeProblems {
                $0.watching.retries = 0
                $0.problems.file = []
            }
        } catch let error as PreferencesError {
            if case .corrupted = error { return }
            changeProblems {
                $0.problems.file = [PreferencesProblem(key: nil, message: error.description)]
            }
            retryReloadLater()
        } catch {
            retryReloadLater()
        }
    }

    private func retryReloadLater() {
        let attempt = state.withLock { state -> Int? in
            guard state.watching.isWanted, !state.watching.retryPending else { return nil }
            state.watching.retryPending = true
            state.watching.retries += 1
            return state.watching.retries
        }
        guard let attempt else { return }
        let pause = min(0.05 * Double(1 << min(attempt - 1, 6)), 2.0)
        queue.submit(after: pause) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.watching.retryPending = false }
            self.reloadFromWatcher()
        }
    }

    var subscriberCount: Int { state.withLock { $0.watching.subscribers.count } }
    var isWatching: Bool { state.withLock { $0.watching.watch != nil } }
}

/// A handle's claim on live reads (S16, <doc:StoreGuarantees>): while one
/// exists, the core watches its storage. Released with the handle that
/// holds it.
final class LiveReader: Sendable {
    private let core: StoreCore
    private let ended = Locked(false)

    init(_ core: StoreCore) {
        self.core = core
        core.addLiveReader()
    }

    /// Stops counting this handle, once; `waiting`, the last live reader
    /// returns once the process's registration is gone.
    func end(waiting: Bool = false) {
        guard
            !ended.withLock({ ended in
                defer { ended = true }; return ended
            })
        else { return }
        core.removeLiveReader(waiting: waiting)
    }

    deinit { end() }
}
