#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files written by appending: the history archive beside a store's file
/// (<doc:HistoryAndUndo>).
extension Platform {
    /// Up to `count` bytes of the file at `path`, from its start or from its
    /// end, and the file's size; nil when the file does not exist. The file
    /// is opened without following a symlink.
    static func readPart(_ path: String, count: Int, fromEnd: Bool) throws -> (
        bytes: [UInt8], size: Int
    )? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw openError("open", path, code: errno)
        }
        defer { close(descriptor) }
        let stamp = try fileStamp(descriptor: descriptor, path: path)
        guard stamp.isRegularFile else {
            throw PreferencesError.io(
                operation: "read", path: path, code: EINVAL, message: "not a regular file")
        }
        let size = Int(stamp.size)
        let length = min(count, size)
        let offset = fromEnd ? size - length : 0
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let got = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, length - done, off_t(offset + done))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path)
            }
            if got == 0 { break }
            done += got
        }
        return (Array(bytes[0..<done]), size)
    }

    /// Appends `bytes` to the file at `path` and fsyncs it, after cutting
    /// the file to `length` bytes when given (dropping a torn last line). A
    /// missing file is created with `mode`, given to `owner` when running as
    /// root; then the caller fsyncs the directory (the result is true). The
    /// file is opened without following a symlink.
    static func append(
        _ bytes: [UInt8], to path: String, cuttingTo length: Int?, mode: UInt32,
        owner: (uid: UInt32, gid: UInt32)?
    ) throws -> Bool {
        var created = false
        var descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        if descriptor < 0 && errno == ENOENT {
            descriptor = open(
                path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                mode_t(mode))
            created = descriptor >= 0
            if created {
                if DiskRecorder.isOn {
                    recordCall(descriptor, fallback: path) { .create(path: $0, mode: mode) }
                }
                try changeMode(descriptor, mode, path: path)
                if let owner, geteuid() == 0, owner.uid != 0 || owner.gid != getegid() {
                    changeOwner(descriptor, owner, path: path)
                }
            }
        }
        if descriptor < 0 { throw openError("open", path, code: errno) }
        defer { close(descriptor) }
        if let length { try truncate(descriptor, to: length, path: path) }
        try writeAll(descriptor, bytes, path: path)
        if syncToDisk(descriptor) != 0 { throw ioError("fsync", path) }
        return created
    }

    /// `ftruncate` to `length` bytes.
    static func truncate(_ descriptor: Int32, to length: Int, path: String) throws {
        if ftruncate(descriptor, off_t(length)) != 0 { throw ioError("truncate", path) }
        if DiskRecorder.isOn {
            recordCall(descriptor, fallback: path) { .truncate(path: $0, length: length) }
        }
    }
}
