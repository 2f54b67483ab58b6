#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls behind ``FileWatcher``: inotify on Linux, event-only
/// descriptors for kqueue (through DispatchSource) on Darwin.
extension Platform {
    /// What the kernel said happened to a name in a watched directory.
    enum DirectoryEventKind: Sendable {
        /// The name now refers to complete contents: a file was renamed onto
        /// it or closed after writing (an atomic replace or an in-place save).
        case settled
        /// A file was created under the name. A close after writing follows
        /// (``settled``) unless it was made as a link.
        case created
        /// The name went away or changed attributes (or a directory appeared
        /// under it); more events usually follow (an editor's save in
        /// several steps).
        case unsettled
        /// The watched directory itself was removed or moved; its watch ended.
        case watchEnded
        /// The kernel dropped events; anything may have changed.
        case overflow
    }

    /// One event read from a directory watch.
    struct DirectoryEvent: Sendable {
        var watch: Int32
        var name: String
        var kind: DirectoryEventKind
    }

    /// Closes a descriptor, ignoring errors (for watch descriptors only).
    static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    #if canImport(Glibc) || canImport(Musl)
        /// A new non-blocking, close-on-exec inotify instance.
        static func makeDirectoryWatcher() throws -> Int32 {
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            if descriptor < 0 { throw ioError("start watching", "inotify") }
            return descriptor
        }

        /// Watches `directory` (following a symlinked directory) for entries
        /// being written, renamed, created and removed; returns the watch id.
        static func watchDirectory(_ directory: String, watcher: Int32) throws -> Int32 {
            let mask =
                IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
                | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
            let watch = inotify_add_watch(watcher, directory, UInt32(mask))
            if watch < 0 { throw ioError("watch directory", directory) }
            return watch
        }

        /// Stops one directory watch (the kernel then queues an ignored event).
        static func unwatchDirectory(_ watch: Int32, watcher: Int32) {
            _ = inotify_rm_watch(watcher, watch)
        }

        /// Reads every queued event without blocking; empty when none are queued.
        static func readDirectoryEvents(watcher: Int32) -> [DirectoryEvent] {
            var events: [DirectoryEvent] = []
            let headerSize = MemoryLayout<inotify_event>.size
            // Left unfilled: every wake reads into it, and clearing 64 KiB
            // each time cost more than the rest of the delivery.
            var buffer = [UInt8](unsafeUninitializedCapacity: 64 * 1024) { _, count in
                count = 64 * 1024
            }
            while true {
                let count = buffer.withUnsafeMutableBytes {
                    read(watcher, $0.baseAddress, $0.count)
                }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return events }
                var offset = 0
                while offset + headerSize <= count {
                    let header = buffer.withUnsafeBytes {
                        $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    }
                    let nameStart = offset + headerSize
                    let nameEnd = min(nameStart + Int(header.len), count)
                    let nameBytes = buffer[nameStart..<nameEnd].prefix { $0 != 0 }
                    events.append(
                        DirectoryEvent(
                            watch: header.wd, name: String(decoding: nameBytes, as: UTF8.self),
                            kind: kind(of: header.mask)))
                    offset = nameEnd
                }
            }
        }

        private static func kind(of mask: UInt32) -> DirectoryEventKind {
            func has(_ flag: Int32) -> Bool { mask & UInt32(flag) != 0 }
            if has(IN_Q_OVERFLOW) { return .overflow }
            if has(IN_IGNORED) || has(IN_DELETE_SELF) || has(IN_MOVE_SELF) { return .watchEnded }
            if has(IN_CLOSE_WRITE) || has(IN_MOVED_TO) { return .settled }
            if has(IN_CREATE) && !has(IN_ISDIR) { return .created }
            return .unsettled
        }
    #endif

    #if canImport(Darwin)
        /// Opens `path` for event notification only (it does not keep a
        /// volume busy); the descriptor feeds a kqueue vnode source.
        static func openForEvents(_ path: String) throws -> Int32 {
            let descriptor = open(path, O_EVTONLY | O_CLOEXEC)
            if descriptor < 0 { throw ioError("watch", path) }
            return descriptor
        }
    #endif
}
