#if canImport(Glibc) || canImport(Musl)
    import Dispatch

    /// The process's one inotify instance, shared by every ``FileWatcher``
    /// (S16, <doc:StoreGuarantees>).
    ///
    /// A directory is watched once however many files in it are watched;
    /// each event is handed to the watchers of the name it concerns. The
    /// kernel's limit on inotify instances per user (often 128) therefore
    /// never forces a process onto polling, and its limit on watches counts
    /// directories, not stores.
    ///
    /// The instance is created on first use and kept for the life of the
    /// process (one descriptor). A directory's watch is kept for ``linger``
    /// after its last watcher leaves, so a store reopened in the same
    /// directory (or a second store there) costs no system call; then it is
    /// removed. Events are read on ``FileWatcher/queue``.
    final class DirectoryWatchHub: Sendable {
        static let shared = DirectoryWatchHub()

        /// How long a directory's watch outlives its last watcher.
        static let linger = DispatchTimeInterval.seconds(1)

        private struct WeakWatcher: Sendable {
            weak var watcher: FileWatcher?
        }

        private struct State: Sendable {
            /// The inotify descriptor, once started.
            var descriptor: Int32?
            /// Per directory watch: per name, the watchers that care (empty
            /// while the watch lingers).
            var names: [Int32: [String: [ObjectIdentifier: WeakWatcher]]] = [:]
            /// The watch of each directory path watched.
            var paths: [String: Int32] = [:]
            /// Per watcher: its directory watches and the names in each.
            var watches: [ObjectIdentifier: [Int32: Set<String>]] = [:]
            /// The watches left without watchers, with when that last
            /// happened, and whether a timer to remove them is set.
            var emptiedAt: [Int32: DispatchTime] = [:]
            var lingerTimerSet = false
        }

        private let state = Locked(State())

        /// Holds the read source for the life of the process.
        private final class SourceHolder: @unchecked Sendable {
            var source: (any DispatchSourceRead)?
        }
        private let holder = SourceHolder()

        /// The inotify descriptor, once the first watch started it.
        var descriptor: Int32? { state.withLock { $0.descriptor } }

        /// Sets the names `watcher` cares about, by directory, replacing what
        /// it watched before. Returns false, watching nothing new, when a
        /// directory cannot be watched (missing, or the watch limit reached)
        /// or the instance cannot be created.
        func watch(_ watcher: FileWatcher, names wanted: [String: Set<String>]) -> Bool {
            let id = ObjectIdentifier(watcher)
            return state.withLock { state in
                guard let descriptor = state.descriptor ?? start(&state) else { return false }
                var added: [Int32: Set<String>] = [:]
                for (directory, names) in wanted {
                    if let watch = state.paths[directory], state.names[watch] != nil {
                        added[watch, default: []].formUnion(names)
                        continue
                    }
                    // Watching a directory again (another spelling of its
                    // path) returns its existing watch.
                    guard let watch = try? Platform.watchDirectory(directory, watcher: descriptor)
                    else {
                        for watch in added.keys where state.names[watch]?.isEmpty == true {
                            lingerThenUnwatch(watch, &state)
                        }
                        return false
                    }
                    state.paths[directory] = watch
                    if state.names[watch] == nil { state.names[watch] = [:] }
                    added[watch, default: []].formUnion(names)
                }
                remove(id, from: &state, keeping: added)
                for (watch, names) in added {
                    for name in names {
                        state.names[watch, default: [:]][name, default: [:]][id] = WeakWatcher(
                            watcher: watcher)
                    }
                }
                state.watches[id] = added
                return true
            }
        }

        /// Stops delivering to the watcher with `id`; a directory no one
        /// else watches is unwatched at once.
        func unwatch(_ id: ObjectIdentifier) {
            state.withLock { state in
                remove(id, from: &state, keeping: [:])
                state.watches[id] = nil
            }
        }

        /// Removes `id` from its directory watches except those in `keeping`.
        private func remove(
            _ id: ObjectIdentifier, from state: inout State, keeping: [Int32: Set<String>]
        ) {
            for (watch, names) in state.watches[id] ?? [:] {
                for name in names where keeping[watch]?.contains(name) != true {
                    state.names[watch]?[name]?[id] = nil
                    if state.names[watch]?[name]?.isEmpty == true {
                        state.names[watch]?[name] = nil
                    }
                }
                if state.names[watch]?.isEmpty == true { lingerThenUnwatch(watch, &state) }
            }
        }

        /// Removes the directory watch `watch` after ``linger`` unless a
        /// watcher took it up again meanwhile. One timer serves every
        /// lingering watch, so a store opened and closed again and again in
        /// one directory sets no timer (and wakes no thread) each time.
        private func lingerThenUnwatch(_ watch: Int32, _ state: inout State) {
            state.emptiedAt[watch] = .now()
            if !state.lingerTimerSet {
                state.lingerTimerSet = true
                scheduleLingerTimer(at: .now() + Self.linger)
            }
        }

        private func scheduleLingerTimer(at deadline: DispatchTime) {
            FileWatcher.queue.asyncAfter(deadline: deadline) { [self] in removeLingeringWatches() }
        }

        /// Removes the watches that have had no watcher for ``linger``, and
        /// sets the timer again for those that have not yet.
        private func removeLingeringWatches() {
            state.withLock { state in
                let now = DispatchTime.now()
                var next: DispatchTime?
                for (watch, emptied) in state.emptiedAt {
                    guard state.names[watch]?.isEmpty == true, let descriptor = state.descriptor
                    else {
                        state.emptiedAt[watch] = nil
                        continue
                    }
                    let due = emptied + Self.linger
                    if due > now {
                        next = min(next ?? due, due)
                        continue
                    }
                    state.emptiedAt[watch] = nil
                    state.names[watch] = nil
                    state.paths = state.paths.filter { $0.value != watch }
                    Platform.unwatchDirectory(watch, watcher: descriptor)
                }
                if let next {
                    scheduleLingerTimer(at: next)
                } else {
                    state.lingerTimerSet = false
                }
            }
        }

        /// Creates the instance and its read source; nil if the kernel refuses.
        private func start(_ state: inout State) -> Int32? {
            guard let descriptor = try? Platform.makeDirectoryWatcher() else { return nil }
            let source = DispatchSource.makeReadSource(
                fileDescriptor: descriptor, queue: FileWatcher.queue)
            source.setEventHandler { [self] in self.deliver(from: descriptor) }
            source.resume()
            holder.source = source  // set once, under the state lock
            state.descriptor = descriptor
            return descriptor
        }

        private struct Notice {
            var watcher: FileWatcher
            var now = false
            var soon = false
            var created = false
            var ended = false
        }

        /// Reads the queued events and tells each watcher what concerns it.
        private func deliver(from descriptor: Int32) {
            let events = Platform.readDirectoryEvents(watcher: descriptor)
            if events.isEmpty { return }
            var notices: [ObjectIdentifier: Notice] = [:]
            func note(
                _ watchers: [ObjectIdentifier: WeakWatcher], _ update: (inout Notice) -> Void
            ) {
                for (id, weak) in watchers {
                    guard let watcher = weak.watcher else { continue }
                    update(&notices[id, default: Notice(watcher: watcher)])
                }
            }
            state.withLock { state in
                func end(_ watch: Int32) {
                    guard let byName = state.names.removeValue(forKey: watch) else { return }
                    state.paths = state.paths.filter { $0.value != watch }
                    // A moved directory keeps its kernel watch: drop it.
                    Platform.unwatchDirectory(watch, watcher: descriptor)
                    for watchers in byName.values {
                        for id in watchers.keys { state.watches[id]?[watch] = nil }
                        note(watchers) { $0.ended = true }
                    }
                }
                for event in events {
                    switch event.kind {
                    case .overflow:
                        for byName in state.names.values {
                            for watchers in byName.values { note(watchers) { $0.now = true } }
                        }
                    case .watchEnded:
                        // The kernel dropped the watch (the directory went away).
                        end(event.watch)
                    case .settled:
                        if let watchers = state.names[event.watch]?[event.name] {
                            note(watchers) { $0.now = true }
                        }
                    case .unsettled:
                        if let watchers = state.names[event.watch]?[event.name] {
                            note(watchers) { $0.soon = true }
                        } else if event.name.hasSuffix(".replicas.d"),
                            let path = state.paths.first(where: { $0.value == event.watch })?.key,
                            (try? Platform.fileStamp(path)) ?? nil == nil
                        {
                            // A registration held open inside keeps a removed
                            // directory's inode alive, so the kernel does not
                            // end its watch: the removal of the registrations
                            // is the sign (F2, <doc:RollingOutAChange>).
                            end(event.watch)
                        }
                    case .created:
                        if let watchers = state.names[event.watch]?[event.name] {
                            note(watchers) { $0.created = true }
                        }
                    }
                }
            }
            for notice in notices.values {
                notice.watcher.directoryEvents(
                    now: notice.now, soon: notice.soon, created: notice.created,
                    ended: notice.ended)
            }
        }
    }
#endif
