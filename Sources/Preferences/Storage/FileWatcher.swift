import Dispatch
import Synchronization

/// Notices writes to a file by other processes and calls back (SPEC C3).
///
/// It watches the file's *directory*, not the file, so that everything a
/// writer can do to the name is seen: an atomic replace (a new inode renamed
/// over the name), an in-place save, deletion and re-creation. A symlinked
/// file is followed: the link's directory and the target's directory are
/// both watched, and the target is resolved again when the link changes.
///
/// - Linux: one inotify instance read by a `DispatchSourceRead`.
/// - Darwin: kqueue vnode sources (`DispatchSource`) on the directories and
///   on the file itself, re-armed when the file's inode changes.
/// - Elsewhere, or when the native watch cannot start (a missing directory,
///   the inotify limits reached) or ends (the directory was removed): a
///   `stat` poll every 20 ms.
///
/// Events that end a save (a rename onto the name, a close after writing)
/// call back at once; events in the middle of one (the old file renamed
/// away, a new empty file created) call back after a short pause, so an
/// editor's multi-step save does not flash the defaults to subscribers.
/// Callbacks may be spurious; the store compares revisions.
///
/// ``cancel()`` stops the watch without waiting; Dispatch closes the
/// descriptors moments later (``released()``). No thread is owned: the
/// sources run on a private serial queue.
final class FileWatcher: StorageWatch {
    /// Which mechanism to use; tests force ``polling``.
    enum Mechanism: Sendable {
        case native
        case polling
    }

    /// The pause after an event in the middle of a save.
    static let settleDelay = DispatchTimeInterval.milliseconds(25)
    /// The polling interval of the fallback.
    static let pollInterval = DispatchTimeInterval.milliseconds(20)

    private let path: String
    private let onChange: @Sendable () -> Void
    private let queue: DispatchQueue
    private let running = Mutex(Running())
    /// Sources not yet through their cancel handlers (which close descriptors).
    private let open = DispatchGroup()

    /// A dispatch source the watcher owns, compared by identity.
    private final class OwnedSource: @unchecked Sendable {
        let source: any DispatchSourceProtocol
        init(_ source: any DispatchSourceProtocol) { self.source = source }
    }

    private struct Running: Sendable {
        var cancelled = false
        var sources: [OwnedSource] = []
        var settleToken: UInt64 = 0
        var usesPolling = false
        var nativeDescriptor: Int32?
    }

    private init(path: String, onChange: @escaping @Sendable () -> Void) {
        self.path = path
        self.onChange = onChange
        queue = DispatchQueue(label: "preferences.watch")
    }

    /// Starts watching `path` (a file that need not exist yet).
    static func start(
        path: String, using mechanism: Mechanism = .native,
        onChange: @escaping @Sendable () -> Void
    ) throws -> FileWatcher {
        let watcher = FileWatcher(path: path, onChange: onChange)
        watcher.queue.sync {
            if mechanism == .polling || !watcher.startNative() { watcher.startPolling() }
        }
        return watcher
    }

    /// Whether the stat-polling fallback is in use.
    var usesPolling: Bool { running.withLock { $0.usesPolling } }

    /// The inotify descriptor while the Linux watch runs (for tests).
    var nativeDescriptor: Int32? { running.withLock { $0.nativeDescriptor } }

    /// Stops the watch. It returns at once; the descriptors are closed
    /// moments later, once Dispatch has let go of them (``released()``).
    func cancel() {
        let sources = running.withLock { running in
            running.cancelled = true
            running.nativeDescriptor = nil
            defer { running.sources = [] }
            return running.sources
        }
        for owned in sources { owned.source.cancel() }
    }

    /// Returns once every descriptor the watcher opened is closed (after
    /// ``cancel()``).
    func released() async {
        await withCheckedContinuation { continuation in
            open.notify(queue: queue) { continuation.resume() }
        }
    }

    // MARK: Sources

    /// Starts a source that the watcher owns; `close` runs once it is
    /// cancelled. A source adopted after ``cancel()`` is cancelled at once.
    @discardableResult
    private func adopt(
        _ source: any DispatchSourceProtocol, closing close: @escaping @Sendable () -> Void
    ) -> OwnedSource {
        let owned = OwnedSource(source)
        open.enter()
        let group = open
        source.setCancelHandler {
            close()
            group.leave()
        }
        let keep = running.withLock { running in
            if running.cancelled { return false }
            running.sources.append(owned)
            return true
        }
        source.resume()
        if !keep { source.cancel() }
        return owned
    }

    private func drop(_ owned: OwnedSource) {
        running.withLock { running in
            running.sources.removeAll { $0 === owned }
        }
        owned.source.cancel()
    }

    private var isCancelled: Bool { running.withLock { $0.cancelled } }

    // MARK: Callbacks

    private func changedNow() {
        if !isCancelled { onChange() }
    }

    /// Calls back now, and drops a pending ``changedSoon()``: this callback
    /// already covers it.
    private func changedNowInsteadOfSoon() {
        running.withLock { $0.settleToken &+= 1 }
        changedNow()
    }

    /// Calls back after ``settleDelay`` unless another event comes first.
    private func changedSoon() {
        let token = running.withLock { running in
            running.settleToken &+= 1
            return running.settleToken
        }
        queue.asyncAfter(deadline: .now() + Self.settleDelay) { [weak self] in
            guard let self, self.running.withLock({ $0.settleToken == token }) else { return }
            self.changedNow()
        }
    }

    // MARK: Polling

    private func startPolling() {
        running.withLock { $0.usesPolling = true }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let last = LastStamp(try? Platform.fileStamp(path))
        let path = path
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
        timer.setEventHandler { [weak self] in
            let stamp = try? Platform.fileStamp(path)
            if last.update(stamp) { self?.changedNow() }
        }
        adopt(timer, closing: {})
    }

    // MARK: Native

    #if canImport(Glibc) || canImport(Musl)
        /// The inotify watches: which names matter in which watched directory.
        private final class WatchedNames: @unchecked Sendable {
            var names: [Int32: Set<String>] = [:]
            var target = ""
            weak var source: OwnedSource?
        }

        private func startNative() -> Bool {
            guard let descriptor = try? Platform.makeDirectoryWatcher() else { return false }
            let watched = WatchedNames()
            guard rewatch(watched, descriptor: descriptor) else {
                Platform.closeDescriptor(descriptor)
                return false
            }
            let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            source.setEventHandler { [weak self] in
                self?.handleEvents(watched, descriptor: descriptor)
            }
            watched.source = adopt(source, closing: { Platform.closeDescriptor(descriptor) })
            running.withLock { $0.nativeDescriptor = descriptor }
            return true
        }

        /// (Re)computes the symlink target and watches the directories of the
        /// path and of its target. Returns false if a directory cannot be watched.
        private func rewatch(_ watched: WatchedNames, descriptor: Int32) -> Bool {
            let target = Platform.resolveSymlinks(path)
            watched.target = target
            var wanted: [String: Set<String>] = [:]
            for file in Set([path, target]) {
                wanted[Platform.parentDirectory(of: file), default: []].insert(
                    Platform.lastComponent(of: file))
            }
            var names: [Int32: Set<String>] = [:]
            for (directory, files) in wanted {
                // Watching a directory twice returns the same id.
                guard let watch = try? Platform.watchDirectory(directory, watcher: descriptor)
                else {
                    return false
                }
                names[watch, default: []].formUnion(files)
            }
            for stale in watched.names.keys where names[stale] == nil {
                Platform.unwatchDirectory(stale, watcher: descriptor)
            }
            watched.names = names
            return true
        }

        private func handleEvents(_ watched: WatchedNames, descriptor: Int32) {
            var now = false
            var soon = false
            var ended = false
            for event in Platform.readDirectoryEvents(watcher: descriptor) {
                switch event.kind {
                case .overflow:
                    now = true
                case .watchEnded:
                    if watched.names[event.watch] != nil { ended = true }
                case .settled, .unsettled:
                    guard watched.names[event.watch]?.contains(event.name) == true else { continue }
                    if event.kind == .settled { now = true } else { soon = true }
                }
            }
            if ended || (now || soon) && Platform.resolveSymlinks(path) != watched.target {
                if ended || !rewatch(watched, descriptor: descriptor) {
                    // A watched directory went away: fall back to polling,
                    // which also notices the directory coming back.
                    if let source = watched.source { drop(source) }
                    running.withLock { $0.nativeDescriptor = nil }
                    if !isCancelled { startPolling() }
                }
                now = true
            }
            if now {
                changedNowInsteadOfSoon()
            } else if soon {
                changedSoon()
            }
        }
    #elseif canImport(Darwin)
        private func startNative() -> Bool {
            let target = Platform.resolveSymlinks(path)
            let directories = Set([
                Platform.parentDirectory(of: path), Platform.parentDirectory(of: target),
            ])
            for directory in directories {
                guard let descriptor = try? Platform.openForEvents(directory) else {
                    cancelSourcesForFallback()
                    return false
                }
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .delete, .rename], queue: queue)
                source.setEventHandler { [weak self] in self?.directoryChanged() }
                adopt(source, closing: { Platform.closeDescriptor(descriptor) })
            }
            watchFile()
            return true
        }

        private func cancelSourcesForFallback() {
            let sources = running.withLock { running in
                defer { running.sources = [] }
                return running.sources
            }
            for owned in sources { owned.source.cancel() }
        }

        /// The vnode source on the file itself, with the inode it watches.
        private let fileSource = Mutex<(inode: UInt64, source: OwnedSource)?>(nil)

        /// Watches the current file (for in-place writes) if its inode changed.
        private func watchFile() {
            let target = Platform.resolveSymlinks(path)
            let inode = (try? Platform.fileStamp(target))?.inode
            let previous = fileSource.withLock { $0 }
            if let previous, previous.inode == inode { return }
            if let previous { drop(previous.source) }
            fileSource.withLock { $0 = nil }
            guard inode != nil, let descriptor = try? Platform.openForEvents(target) else { return }
            guard let stamp = try? Platform.fileStamp(descriptor: descriptor, path: target) else {
                Platform.closeDescriptor(descriptor)
                return
            }
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: descriptor,
                eventMask: [.write, .extend, .attrib, .delete, .rename],
                queue: queue)
            source.setEventHandler { [weak self] in self?.directoryChanged() }
            let owned = adopt(source, closing: { Platform.closeDescriptor(descriptor) })
            fileSource.withLock { $0 = (stamp.inode, owned) }
        }

        private func directoryChanged() {
            watchFile()
            // kqueue reports no close-after-write: let a burst of events settle.
            changedSoon()
        }
    #else
        private func startNative() -> Bool { false }
    #endif
}

/// The last stamp seen; only touched from the watcher's serial queue.
private final class LastStamp: @unchecked Sendable {
    private var stamp: Platform.FileStamp??

    init(_ stamp: Platform.FileStamp?) { self.stamp = .some(stamp) }

    func update(_ stamp: Platform.FileStamp?) -> Bool {
        defer { self.stamp = .some(stamp) }
        return self.stamp != .some(stamp)
    }
}
