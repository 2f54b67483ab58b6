#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Registration files a live process holds an `flock` on (F2,
/// <doc:RollingOutAChange>): the lock is released by the system when the
/// process ends, however it ends, so anyone can tell a dead process's file.
extension Platform {
    /// This process's id.
    static var processID: Int32 { Int32(getpid()) }

    /// Creates `path` holding `bytes` (mode 0644), locked by the returned
    /// descriptor: the file is written and locked under a temporary name and
    /// renamed into place, so nobody ever sees it unlocked. The descriptor
    /// is read-only, so that holding it never keeps a file system from
    /// being remounted read-only.
    static func createLockedFile(_ path: String, bytes: [UInt8]) throws -> Int32 {
        let temporary =
            parentDirectory(of: path) + "/." + lastComponent(of: path) + "." + randomSuffix()
            + ".tmp"
        let writer = open(
            temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o644))
        if writer < 0 { throw ioError("create", temporary) }
        if DiskRecorder.isOn {
            recordCall(writer, fallback: temporary) { .create(path: $0, mode: 0o644) }
        }
        do {
            defer { close(writer) }
            try? changeMode(writer, 0o644, path: temporary)
            try writeAll(writer, bytes, path: temporary)
        } catch {
            unlinkQuietly(temporary)
            throw error
        }
        let descriptor = open(temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        do {
            if descriptor < 0 { throw ioError("open", temporary) }
            if flock(descriptor, LOCK_EX | LOCK_NB) != 0 { throw ioError("lock", temporary) }
            try rename(temporary, path)
        } catch {
            unlinkQuietly(temporary)
            if descriptor >= 0 { close(descriptor) }
            throw error
        }
        return descriptor
    }

    /// Replaces the contents of the registration file `path` (which this
    /// process holds locked) with `bytes` in place: one write from the
    /// start, then a truncation to their length, through a descriptor
    /// opened for it; no sync, as a registration does not outlive its
    /// process.
    static func rewriteLockedFile(_ path: String, bytes: [UInt8]) throws {
        let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 { throw ioError("open", path) }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + offset, bytes.count - offset, off_t(offset))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw ioError("write", path)
            }
            if DiskRecorder.isOn {
                let part = Array(bytes[offset..<offset + written])
                let start = offset
                recordCall(descriptor, fallback: path) {
                    .write(path: $0, offset: start, bytes: part)
                }
            }
            offset += written
        }
        try truncate(descriptor, to: bytes.count, path: path)
    }

    /// Removes the registration file `path` and releases its lock (a clean close).
    static func removeLockedFile(_ descriptor: Int32, path: String) {
        unlinkQuietly(path)
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Whether a process holds the lock on `path`; when nobody does (its
    /// process ended without closing), removes the file and returns false.
    /// A file that is gone is not held.
    static func isHeldElseRemove(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 { return false }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 { return errno == EWOULDBLOCK }
        unlinkQuietly(path)
        return false
    }
}

#if canImport(Glibc) || canImport(Musl)
    extension Platform {
        /// Watches `directory` for any entry written in place, closed after
        /// writing, created, renamed or removed.
        static func watchDirectoryForWrites(_ directory: String, watcher: Int32) throws -> Int32 {
            let mask =
                IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
                | IN_ONLYDIR
            let watch = inotify_add_watch(watcher, directory, UInt32(mask))
            if watch < 0 { throw ioError("watch directory", directory) }
            return watch
        }
    }
#endif
