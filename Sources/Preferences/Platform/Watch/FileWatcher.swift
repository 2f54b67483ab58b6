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
/// This file holds what every mechanism shares; each mechanism has a file
/// of its own, behind ``NativeFileWatch``:
/// - Linux (`FileWatcher+Inotify.swift`): one inotify instance for the
///   whole process, with one watch per directory however many files in it
///   are watched (``DirectoryWatchHub``).
/// - Darwin (`FileWatcher+Kqueue.swift`): kqueue vnode sources
///   (`DispatchSource`) on the directories and on the file itself, re-armed
///   when the file's inode changes.
/// - Elsewhere, or when the native watch cannot start (a missing directory,
///   the inotify limits reached) or ends (the directory was removed or
///   moved): a `stat` poll every 20 ms (`FileWatcher+Polling.swift`), which
///   tries the native watch again every 200 ms and gives way to it once it
///   starts (the directory exists again, a watch slot came free).
///
/// Events that end a save (a rename onto the name, a close after writing)
/// call back at once; events in the middle of one (the old file renamed
/// away, a new empty file created) call back after a short pause, so an
/// editor's multi-step save does not flash the defaults to subscribers.
/// Callbacks may be spurious; the store compares revisions.
///
/// ``cancel()`` stops the watch without waiting; no callback runs once it
/// has returned (``CancellableHandler``). Dispatch closes the descriptors it
/// owns moments later (``released()``). No thread is owned: every watcher
/// runs on one serial queue, ``queue``, which draws on the threads all
/// stores share.
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
    let mechanism: Mechanism
    /// The pause after a file was created under the name
    /// (``createdSettleDelay`` unless a test asks for another).
    let createdSettle: DispatchTimeInterval
    /// The caller's callback; nothing reaches it after ``cancel()``.
    private let onChange: CancellableHandler<Void>
    /// This platform's native watch, with what it keeps per watcher.
    let native = PlatformFileWatch()
    var queue: DispatchQueue { Self.queue }
    let running = Locked(Running())
    /// Sources not yet through their cancel handlers (which close descriptors).
    private let open = DispatchGroup()

    /// A dispatch source the watcher owns, compared by identity.
    final class OwnedSource: @unchecked Sendable {
        let source: any DispatchSourceProtocol
        init(_ source: any DispatchSourceProtocol) { self.source = source }
    }

    struct Running: Sendable {
        var sources: [OwnedSource] = []
        var settleToken: UInt64 = 0
        var usesPolling = false
        var poll: OwnedSource?
        /// The resolved symlink target the native watch follows.
        var target = ""
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
        self.onChange = CancellableHandler(onChange)
    }

    /// The path's symlink target: the opener's resolution the first time,
    /// then resolved afresh.
    func resolvedTarget() -> String {
        if let target = initialTarget.withLock({ $0.take() }) { return target }
        return Platform.resolveSymlinks(path)
    }

    deinit {
        native.stop(ObjectIdentifier(self))
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
        let begin = {
            if mechanism == .polling || !watcher.startNative() { watcher.startPolling() }
        }
        if PlatformFileWatch.startsOnQueue {
            // On the queue, so no event is handled before the sources are set up.
            Self.queue.sync(execute: begin)
        } else {
            // Events may come on the queue while this runs; the watcher is
            // ready for them before it is registered.
            begin()
        }
        return watcher
    }

    /// Whether the stat-polling fallback is in use.
    var usesPolling: Bool { running.withLock { $0.usesPolling } }

    /// The descriptor of the native watch while this watcher is on it (for
    /// tests): the process's inotify descriptor on Linux.
    var nativeDescriptor: Int32? { native.descriptor }

    /// Stops the watch. It returns at once; the descriptors it owns are
    /// closed moments later, once Dispatch has let go of them (``released()``).
    func cancel() {
        onChange.cancel()
        let sources = running.withLock { running in
            running.poll = nil
            defer { running.sources = [] }
            return running.sources
        }
        native.stop(ObjectIdentifier(self))
        for owned in sources { owned.source.cancel() }
    }

    /// Returns once every descriptor the watcher opened is closed (after
    /// ``cancel()``).
    func released() async {
        await withCheckedContinuation { continuation in
            open.notify(queue: queue) { continuation.resume() }
        }
    }

    /// Starts the native watch (again); false when it cannot start.
    func startNative() -> Bool { native.start(for: self) }

    // MARK: Sources

    /// Starts a source that the watcher owns; `close` runs once it is
    /// cancelled. A source adopted after ``cancel()`` is cancelled at once.
    @discardableResult
    func adopt(
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
            if isCancelled { return false }
            running.sources.append(owned)
            return true
        }
        source.resume()
        if !keep { source.cancel() }
        return owned
    }

    func drop(_ owned: OwnedSource) {
        running.withLock { running in
            running.sources.removeAll { $0 === owned }
        }
        owned.source.cancel()
    }

    /// Cancels every source the watcher owns (the native watch's, when it
    /// gives way to polling).
    func dropAllSources() {
        let sources = running.withLock { running in
            defer { running.sources = [] }
            return running.sources
        }
        for owned in sources { owned.source.cancel() }
    }

    var isCancelled: Bool { onChange.isCancelled }

    // MARK: Callbacks

    func changedNow() {
        onChange.deliver()
    }

    /// Calls back now, and drops a pending ``changedSoon(after:)``: this
    /// callback already covers it.
    func changedNowInsteadOfSoon() {
        running.withLock { $0.settleToken &+= 1 }
        changedNow()
    }

    /// Calls back after `delay` unless another event comes first.
    func changedSoon(after delay: DispatchTimeInterval = settleDelay) {
        let token = running.withLock { running in
            running.settleToken &+= 1
            return running.settleToken
        }
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, self.running.withLock({ $0.settleToken == token }) else { return }
            self.changedNow()
        }
    }
}

/// A platform's native way to watch a file's names, one per
/// ``FileWatcher``: inotify (`FileWatcher+Inotify.swift`), kqueue
/// (`FileWatcher+Kqueue.swift`), or none (`FileWatcher+NoNative.swift`).
/// Each file defines `PlatformFileWatch` for its platform.
protocol NativeFileWatch: Sendable {
    /// Whether ``FileWatcher/start(path:using:target:createdSettle:onChange:)``
    /// starts the watch on ``FileWatcher/queue`` (so that no event comes
    /// before it is set up) rather than on the caller's thread.
    static var startsOnQueue: Bool { get }

    init()

    /// Starts (or restarts) watching for `watcher`; false when it cannot,
    /// and the watcher polls.
    func start(for watcher: FileWatcher) -> Bool

    /// Stops delivering to the watcher with `id` (on cancel and deinit).
    func stop(_ id: ObjectIdentifier)

    /// The descriptor tests look at while the watch is on, if any.
    var descriptor: Int32? { get }
}
