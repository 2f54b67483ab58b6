import Dispatch

/// Watches a directory of registrations (the file backend's ``ReplicaRegistry/watch(_:)``):
/// one inotify instance of its own on Linux, read by a dispatch source;
/// elsewhere a timer every 20 ms. Calls `onChange` once at start, so a
/// waiter always looks once.
final class RegistrationWatch: StorageWatch, @unchecked Sendable {
    private let source: any DispatchSourceProtocol

    init(directory: String, onChange: @escaping @Sendable () -> Void) throws {
        let queue = DispatchQueue(label: "prefs.replicas.watch")
        #if canImport(Glibc) || canImport(Musl)
            let watcher = try Platform.makeDirectoryWatcher()
            do {
                _ = try Platform.watchDirectoryForWrites(directory, watcher: watcher)
            } catch {
                Platform.closeDescriptor(watcher)
                throw error
            }
            let read = DispatchSource.makeReadSource(fileDescriptor: watcher, queue: queue)
            read.setEventHandler {
                if !Platform.readDirectoryEvents(watcher: watcher).isEmpty { onChange() }
            }
            read.setCancelHandler { Platform.closeDescriptor(watcher) }
            source = read
        #else
            source = queue.repeatingTimer(every: .milliseconds(20), onChange)
        #endif
        source.resume()
        queue.async(execute: onChange)
    }

    func cancel() { source.cancel() }

    deinit { source.cancel() }
}
