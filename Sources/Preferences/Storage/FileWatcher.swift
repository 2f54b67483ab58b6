import Dispatch

/// Notices writes to a file by other processes and calls back (C3,
/// <doc:ObservingChanges>; S16, <doc:StoreGuarantees>).
///
/// It watches the file's *directory*, not the file, so that everything a
/// writer can do to the name is seen: an atomic replace (a new inode renamed
/// over the name), an in-place save, deletion and re-creation. A symlinked
/// file is followed: the link's directory and the target's directory are
/// both watched, and the target is resolved again when the link changes.
///
/// - Linux: one inotify instance for the whole process, with one watch per
///   directory however many files in it are watched (``DirectoryWatchHub``).
/// - Darwin: kqueue vnode sources (`DispatchSource`) on the directories and
///   on the file itself, re-armed when the file's inode changes.
/// - Elsewhere, or when the native watch cannot start (a missing directory,
///   the inotify limits reached) or ends (the directory was removed or
///   moved): a `stat` poll every 20 ms, which tries the native watch again
///   every 200 ms and gives way to it once it starts (the directory exists
///   again, a watch slot came free).
///
/// Events that end a save (a rename onto the name, a close after writing)
/// call back at once; events in the middle of one (the old file renamed
/// away, a new empty file created) call back after a short pause, so an
/// editor's multi-step save does not flash the defaults to subscribers.
/// Callbacks may be spurious; the store compares revisions.
///
/// ``cancel()`` stops the watch without waiting; Dispatch closes the
/// descriptors it owns moments later (``released()``). No thread is owned:
/// every watcher runs on one serial queue, ``queue``, which draws on the
/// threads all stores share.
final class FileWatcher: StorageWatch {
    /// Which mechanism to use; tests force ``polling``.
    enum Mechanism: Sendable {
        case native
        case polling
    }

    /// The pause after an event in the middle of a save.
    static let settleDelay = DispatchTimeInterval.milliseconds(25)
    /// The pause after a file was created under the name, for the close
    /// that ends its writing: a writer slower than ``settleDelay`` (a busy
    /// machine, a large file) is not reported half-written. A file made as
    /// a link, which no close follows, is reported after this pause.
    static let createdSettleDelay = DispatchTimeInterval.seconds(2)
    /// The polling interval of the fallback.
    static let pollInterval = DispatchTimeInterval.milliseconds(20)
    /// A polling watcher tries the native watch again every this many polls.
    static let nativeRetryPolls = 10

    /// The one queue every watcher's callbacks, timers and sources run on.
    static let queue = DispatchQueue(label: "preferences.watch", target: SharedWork.queue)

    let path: String
    private let mechanism: Mechanism
    /// The pause after a file was created under the name
    /// (``createdSettleDelay`` unless a test asks for another).
    private let createdSettle: DispatchTimeInterval
    private let onChange: @Sendable () -> Void
    private var queue: DispatchQueue { Self.queue }
    private let running = Locked(Running())
    /// Held while a callback runs, and taken by ``cancel()`` to mark the
    /// watch cancelled: no callback is under way once `cancel()` returns,
    /// and none starts after. Recursive, so a callback may cancel.
    private let delivering = RecursiveLock()
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
        var poll: OwnedSource?
        /// The resolved symlink target the native watch follows.
        var target = ""
        /// Whether the process-wide directory watch carries this watcher.
        var onHub = false
    }

    /// The file's target as the opener just resolved it, for the first
    /// start of the native watch (later ones resolve the path again).
    private let initialTarget: Locked<String?>

    private init(
        path: String, mechanism: Mechanism, target: String?,
        createdSettle: DispatchTimeInterval, onChange: @escaping @Sendable () -> Void
    ) {
        self.path = path
        self.mechanism = mechanism
        self.createdSettle = createdSettle
        self.initialTarget = Locked(target)
        self.onChange = onChange
    }

    /// The path's symlink target: the opener's resolution the first time,
    /// then resolved afresh.
    private func resolvedTarget() -> String {
        if let target = initialTarget.withLock({ $0.take() }) { return target }
        return Platform.resolveSymlinks(path)
    }

    deinit {
        #if canImport(Glibc) || canImport(Musl)
            DirectoryWatchHub.shared.unwatch(ObjectIdentifier(self))
        #endif
    }

    /// Starts watching `path` (a file that need not exist yet); `target`
    /// is where its symlinks lead, when the caller has just resolved them.
    /// `createdSettle` is the pause after a creation (tests lengthen it so
    /// that a slow machine cannot outlast it).
    static func start(
        path: String, using mechanism: Mechanism = .native, target: String? = nil,
        createdSettle: DispatchTimeInterval = createdSettleDelay,
        onChange: @escaping @Sendable () -> Void
    ) throws -> FileWatcher {
        let watcher = FileWatcher(
            path: path, mechanism: mechanism, target: target, createdSettle: createdSettle,
            onChange: onChange)
        #if canImport(Darwin)
            // On the queue, so no event is handled before the sources are set up.
            Self.queue.sync {
                if mechanism == .polling || !watcher.startNative() { watcher.startPolling() }
            }
        #else
            // The directory watch may deliver events on the queue while this
            // runs; the watcher is ready for them before it is registered.
            if mechanism == .polling || !watcher.startNative() { watcher.startPolling() }
        #endif
        return watcher
    }

    /// Whether the stat-polling fallback is in use.
    var usesPolling: Bool { running.withLock { $0.usesPolling } }

    /// The process's inotify descriptor while this watcher is on it (for tests).
    var nativeDescriptor: Int32? {
        #if canImport(Glibc) || canImport(Musl)
            guard running.withLock({ $0.onHub }) else { return nil }
            return DirectoryWatchHub.shared.descriptor
        #else
            return nil
        #endif
    }

    /// Stops the watch. It returns at once; the descriptors it owns are
    /// closed moments later, once Dispatch has let go of them (``released()``).
    func cancel() {
        delivering.withLock { running.withLock { $0.cancelled = true } }
        let sources = running.withLock { running in
            running.onHub = false
            running.poll = nil
            defer { running.sources = [] }
            return running.sources
        }
        #if canImport(Glibc) || canImport(Musl)
            DirectoryWatchHub.shared.unwatch(ObjectIdentifier(self))
        #endif
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
        delivering.withLock { if !isCancelled { onChange() } }
    }

    /// Calls back now, and drops a pending ``changedSoon()``: this callback
    /// already covers it.
    private func changedNowInsteadOfSoon() {
        running.withLock { $0.settleToken &+= 1 }
        changedNow()
    }

    /// Calls back after `delay` unless another event comes first.
    private func changedSoon(after delay: DispatchTimeInterval = settleDelay) {
        let token = running.withLock { running in
            running.settleToken &+= 1
            return running.settleToken
        }
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, self.running.withLock({ $0.settleToken == token }) else { return }
            self.changedNow()
        }
    }

    // MARK: Polling

    /// How many times this process wrote each path (a store file, and its
    /// symlink target).
    ///
    /// A poll compares the file's stamp with the one it saw last, so a file
    /// this process writes and another removes between two polls (20 ms)
    /// looks unchanged: absent before, absent after. The store holds the
    /// written values meanwhile and would never hear of the removal. A
    /// write counted here makes the next poll call back, and the store
    /// compares revisions. Native watches see every event and need no count.
    private static let writesByPath = Locked<[String: UInt64]>([:])

    /// Counts a write of this process to each of `paths` (the same path
    /// once).
    static func noteWrite(to paths: [String]) {
        writesByPath.withLock { writes in
            for path in Set(paths) { writes[path, default: 0] &+= 1 }
        }
    }

    private static func writes(to path: String) -> UInt64 {
        writesByPath.withLock { $0[path] ?? 0 }
    }

    /// Polls the file's stamp; unless polling was asked for, tries the native
    /// watch again now and then and hands over to it once it starts.
    private func startPolling() {
        let path = path
        let poll = PollState(try? Platform.fileStamp(path), writes: Self.writes(to: path))
        let retry = mechanism == .native
        let timer = queue.repeatingTimer(every: Self.pollInterval) { [weak self] in
            guard let self else { return }
            if poll.update(try? Platform.fileStamp(path), writes: Self.writes(to: path)) {
                self.changedNow()
            }
            if retry && poll.tick().isMultiple(of: Self.nativeRetryPolls) { self.tryNativeAgain() }
        }
        let owned = adopt(timer, closing: {})
        running.withLock { running in
            running.usesPolling = true
            running.poll = owned
        }
    }

    /// On the queue, from the poll: back to the native watch if it starts.
    private func tryNativeAgain() {
        guard !isCancelled, startNative() else { return }
        let poll = running.withLock { running -> OwnedSource? in
            running.usesPolling = false
            defer { running.poll = nil }
            return running.poll
        }
        if let poll { drop(poll) }
        // A write between the last poll and the watch's start.
        changedNow()
    }

    // MARK: Native

    #if canImport(Glibc) || canImport(Musl)
        /// Which names matter in which directories: the file and its symlink target.
        private func wantedNames(target: String) -> [String: Set<String>] {
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

        /// Puts this watcher on the process-wide directory watch.
        private func startNative() -> Bool {
            let target = resolvedTarget()
            let started = running.withLock { running in
                running.target = target
                running.onHub = !running.cancelled
                return running.onHub
            }
            guard started else { return false }
            guard DirectoryWatchHub.shared.watch(self, names: wantedNames(target: target)) else {
                running.withLock { $0.onHub = false }
                return false
            }
            // A cancel that came while the watch was being added.
            if isCancelled {
                DirectoryWatchHub.shared.unwatch(ObjectIdentifier(self))
                return false
            }
            return true
        }

        /// Called on the queue with what happened to this watcher's names.
        func directoryEvents(now: Bool, soon: Bool, created: Bool, ended: Bool) {
            let (onHub, target) = running.withLock { ($0.onHub, $0.target) }
            guard onHub, !isCancelled else { return }
            var now = now
            if ended || (now || soon || created) && Platform.resolveSymlinks(path) != target {
                let resolved = Platform.resolveSymlinks(path)
                let rewatched =
                    !ended
                    && DirectoryWatchHub.shared.watch(self, names: wantedNames(target: resolved))
                if rewatched {
                    running.withLock { $0.target = resolved }
                } else {
                    // A watched directory went away: poll, which also
                    // notices the directory coming back.
                    DirectoryWatchHub.shared.unwatch(ObjectIdentifier(self))
                    running.withLock { $0.onHub = false }
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
    #elseif canImport(Darwin)
        /// The watched directories with the inode each had when opened.
        private let directoryInodes = Locked<[String: UInt64]>([:])

        private func startNative() -> Bool {
            let target = resolvedTarget()
            let directories = Set([
                Platform.parentDirectory(of: path), Platform.parentDirectory(of: target),
            ])
            var opened: [OwnedSource] = []
            var inodes: [String: UInt64] = [:]
            for directory in directories {
                guard let descriptor = try? Platform.openForEvents(directory) else {
                    for owned in opened { drop(owned) }
                    return false
                }
                guard let stamp = try? Platform.fileStamp(descriptor: descriptor, path: directory)
                else {
                    Platform.closeDescriptor(descriptor)
                    for owned in opened { drop(owned) }
                    return false
                }
                inodes[directory] = stamp.inode
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .delete, .rename], queue: queue)
                source.setEventHandler { [weak self] in self?.directoryChanged() }
                opened.append(adopt(source, closing: { Platform.closeDescriptor(descriptor) }))
            }
            directoryInodes.withLock { $0 = inodes }
            running.withLock { $0.target = target }
            watchFile()
            return true
        }

        /// The vnode source on the file itself, with the inode it watches.
        private let fileSource = Locked<(inode: UInt64, source: OwnedSource)?>(nil)

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
            if isCancelled || usesPolling { return }
            // A vnode source keeps watching a removed or moved directory's
            // old inode, which will never see the file again: poll instead
            // until the directory is back.
            let inodes = directoryInodes.withLock { $0 }
            let gone = inodes.contains { directory, inode in
                (try? Platform.fileStamp(directory))?.inode != inode
            }
            if gone {
                let sources = running.withLock { running in
                    defer { running.sources = [] }
                    return running.sources
                }
                fileSource.withLock { $0 = nil }
                for owned in sources { owned.source.cancel() }
                startPolling()
                changedNowInsteadOfSoon()
                return
            }
            watchFile()
            // kqueue reports no close-after-write: let a burst of events settle.
            changedSoon()
        }
    #else
        private func startNative() -> Bool { false }
    #endif
}

/// The poll's last stamp and tick count; only touched from the watcher queue.
private final class PollState: @unchecked Sendable {
    private var stamp: Platform.FileStamp??
    private var writes: UInt64
    private var ticks = 0

    init(_ stamp: Platform.FileStamp?, writes: UInt64) {
        self.stamp = .some(stamp)
        self.writes = writes
    }

    /// Whether the file's stamp, or this process's count of writes to it,
    /// changed since the last poll.
    func update(_ stamp: Platform.FileStamp?, writes: UInt64) -> Bool {
        defer {
            self.stamp = .some(stamp)
            self.writes = writes
        }
        return self.stamp != .some(stamp) || self.writes != writes
    }

    func tick() -> Int {
        ticks += 1
        return ticks
    }
}
