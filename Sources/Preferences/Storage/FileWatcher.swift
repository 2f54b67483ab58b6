import Dispatch
import Synchronization

/// Notices writes to a file by other processes and calls back.
///
/// This version polls the file's identity every 20 ms on a background
/// queue; it copes with atomic replaces (a new inode), deletion and
/// re-creation, because it compares `stat` results rather than holding the
/// file open.
final class FileWatcher: StorageWatch {
    private let timer: Mutex<(any DispatchSourceTimer)?>

    private init(path: String, onChange: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "preferences.watch")
        timer = Mutex(DispatchSource.makeTimerSource(queue: queue))
        let last = LastStamp(try? Platform.fileStamp(path))
        timer.withLock { timer in
            timer?.schedule(deadline: .now() + .milliseconds(20), repeating: .milliseconds(20))
            timer?.setEventHandler {
                let stamp = try? Platform.fileStamp(path)
                if last.update(stamp) { onChange() }
            }
            timer?.resume()
        }
    }

    static func start(path: String, onChange: @escaping @Sendable () -> Void) throws -> FileWatcher {
        FileWatcher(path: path, onChange: onChange)
    }

    func cancel() {
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }
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
