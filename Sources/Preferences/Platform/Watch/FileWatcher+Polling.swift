import Dispatch

/// The `stat`-polling mechanism of ``FileWatcher``: the fallback wherever
/// no native watch runs (see the type's documentation), and what tests ask
/// for with ``FileWatcher/Mechanism/polling``.
extension FileWatcher {
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
    func startPolling() {
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
