import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A call that changed what is on disk, as the shim made it: what the
/// crash-state explorer (`prefs-crash-explorer`) replays to build the states
/// a crash may leave. Paths are absolute, resolved from the descriptor
/// where the call took one.
package enum DiskOperation: Sendable, Equatable {
    /// A new, empty file (`open` with `O_CREAT` where nothing was).
    case create(path: String, mode: UInt32)
    /// `write` or `pwrite` of `bytes` at `offset`.
    case write(path: String, offset: Int, bytes: [UInt8])
    /// `ftruncate` to `length` bytes.
    case truncate(path: String, length: Int)
    /// `fsync` (or `fdatasync`) of a file.
    case sync(path: String)
    /// `fsync` of a directory.
    case syncDirectory(path: String)
    /// `rename`.
    case rename(from: String, to: String)
    /// `link`.
    case link(from: String, to: String)
    /// `unlink` (or a directory removed).
    case unlink(path: String)
    /// `mkdir`.
    case makeDirectory(path: String)
    /// `fchmod`.
    case changeMode(path: String, mode: UInt32)
    /// `fchown` or `lchown`.
    case changeOwner(path: String, uid: UInt32, gid: UInt32)
    /// A label the recording program put between calls (a write that
    /// returned, say); not a system call.
    case mark(String)
}

/// Records every call of the shim that changes what is on disk, while it is
/// on. Off, it costs one relaxed load of a flag per such call.
///
/// ```swift
/// DiskRecorder.start()
/// try await store.set(.darkMode, true)
/// DiskRecorder.mark("acknowledged")
/// let operations = DiskRecorder.stop()
/// ```
package enum DiskRecorder {
    private static let on = Atomic<Bool>(false)
    private static let operations = Locked<[DiskOperation]>([])

    /// Whether calls are being recorded.
    @inline(__always)
    static var isOn: Bool { on.load(ordering: .relaxed) }

    /// Starts recording, with an empty record.
    package static func start() {
        operations.withLock { recorded in
            recorded = []
            on.store(true, ordering: .sequentiallyConsistent)
        }
    }

    /// Stops recording and returns what was recorded, in the order made.
    package static func stop() -> [DiskOperation] {
        operations.withLock { recorded in
            on.store(false, ordering: .sequentiallyConsistent)
            defer { recorded = [] }
            return recorded
        }
    }

    /// Adds a label between the calls recorded (when recording).
    package static func mark(_ label: String) {
        if isOn { record(.mark(label)) }
    }

    /// Adds `operation`, unless recording stopped since the caller saw it
    /// on: a call another thread makes across ``stop()`` is in this record
    /// or in none, never left for the next.
    static func record(_ operation: DiskOperation) {
        operations.withLock { recorded in
            if on.load(ordering: .sequentiallyConsistent) { recorded.append(operation) }
        }
    }
}

extension Platform {
    /// The path of the file open at `descriptor`, as the system tells it
    /// (`/proc/self/fd` on Linux, `F_GETPATH` on Darwin); for recording.
    static func recordedPath(_ descriptor: Int32, fallback: String) -> String {
        #if canImport(Darwin)
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
            guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return fallback }
            return String(cString: buffer)
        #else
            return linkTarget("/proc/self/fd/\(descriptor)") ?? fallback
        #endif
    }

    /// Records a call on the file open at `descriptor`.
    static func recordCall(
        _ descriptor: Int32, fallback: String, _ make: (String) -> DiskOperation
    ) {
        DiskRecorder.record(make(recordedPath(descriptor, fallback: fallback)))
    }

    /// Records `fsync` of a file or of a directory, as the descriptor is.
    static func recordSync(_ descriptor: Int32) {
        let path = recordedPath(descriptor, fallback: "?")
        var info = systemStat()
        let isDirectory =
            fstat(descriptor, &info) == 0
            && UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFDIR)
        DiskRecorder.record(isDirectory ? .syncDirectory(path: path) : .sync(path: path))
    }

    /// Where the next `write` on `descriptor` lands: the end of the file
    /// for a descriptor opened with `O_APPEND`, else its offset.
    static func writeOffset(_ descriptor: Int32) -> Int {
        if fcntl(descriptor, F_GETFL) & O_APPEND != 0 {
            var info = systemStat()
            return fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
        }
        return Int(lseek(descriptor, 0, SEEK_CUR))
    }

    /// An absolute form of `path` for recording, its directory's links
    /// resolved as the descriptors' paths are (relative to the working
    /// directory otherwise): the explorer places every call by one spelling.
    static func recordedAbsolute(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        let name = lastComponent(of: absolute)
        guard let resolved = realpath(parentDirectory(of: absolute), nil) else { return absolute }
        defer { free(resolved) }
        let directory = String(cString: resolved)
        return (directory == "/" ? "" : directory) + "/" + name
    }
}
