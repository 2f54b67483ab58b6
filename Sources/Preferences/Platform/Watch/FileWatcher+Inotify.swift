#if canImport(Glibc) || canImport(Musl)
    import Dispatch

    typealias PlatformFileWatch = InotifyFileWatch

    /// The Linux mechanism of ``FileWatcher``: the watcher is put on the
    /// process's one inotify instance (``DirectoryWatchHub``), which hands
    /// it the events of its names (``FileWatcher/directoryEvents(now:soon:created:ended:)``).
    final class InotifyFileWatch: NativeFileWatch {
        static var startsOnQueue: Bool { false }

        /// Whether the process-wide directory watch carries this watcher.
        let onHub = Locked(false)

        init() {}

        /// Puts `watcher` on the process-wide directory watch.
        func start(for watcher: FileWatcher) -> Bool {
            let target = watcher.resolvedTarget()
            watcher.running.withLock { $0.target = target }
            let started = onHub.withLock { onHub in
                onHub = !watcher.isCancelled
                return onHub
            }
            guard started else { return false }
            guard
                DirectoryWatchHub.shared.watch(
                    watcher, names: Self.wantedNames(path: watcher.path, target: target))
            else {
                onHub.withLock { $0 = false }
                return false
            }
            // A cancel that came while the watch was being added.
            if watcher.isCancelled {
                DirectoryWatchHub.shared.unwatch(ObjectIdentifier(watcher))
                return false
            }
            return true
        }

        func stop(_ id: ObjectIdentifier) {
            onHub.withLock { $0 = false }
            DirectoryWatchHub.shared.unwatch(id)
        }

        var descriptor: Int32? {
            guard onHub.value else { return nil }
            return DirectoryWatchHub.shared.descriptor
        }

        /// Which names matter in which directories: the file and its symlink target.
        static func wantedNames(path: String, target: String) -> [String: Set<String>] {
            if target == path {
                return [Platform.parentDirectory(of: path): [Platform.lastComponent(of: path)]]
            }
            var wanted: [String: Set<String>] = [:]
            for file in Set([path, target]) {
                wanted[Platform.parentDirectory(of: file), default: []].insert(
                    Platform.lastComponent(of: file))
            }
            return wanted
        }
    }

    extension FileWatcher {
        /// Called on the queue by ``DirectoryWatchHub`` with what happened
        /// to this watcher's names.
        func directoryEvents(now: Bool, soon: Bool, created: Bool, ended: Bool) {
            let target = running.withLock { $0.target }
            guard native.onHub.value, !isCancelled else { return }
            var now = now
            if ended || (now || soon || created) && Platform.resolveSymlinks(path) != target {
                let resolved = Platform.resolveSymlinks(path)
                let rewatched =
                    !ended
                    && DirectoryWatchHub.shared.watch(
                        self, names: InotifyFileWatch.wantedNames(path: path, target: resolved))
                if rewatched {
                    running.withLock { $0.target = resolved }
                } else {
                    // A watched directory went away: poll, which also
                    // notices the directory coming back.
                    DirectoryWatchHub.shared.unwatch(ObjectIdentifier(self))
                    native.onHub.withLock { $0 = false }
                    if !isCancelled { startPolling() }
                }
                now = true
            }
            if now {
                changedNowInsteadOfSoon()
            } else if soon {
                changedSoon()
            } else if created {
                changedSoon(after: createdSettle)
            }
        }
    }
#endif
