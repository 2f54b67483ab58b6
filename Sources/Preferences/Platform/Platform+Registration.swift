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
        if descriptor < 0 { throw openError("open", path, code: errno) }
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

    /// The registration files in `directory` (names ending in `.json`, not
    /// starting with a dot) that a live process holds locked; a file nobody
    /// holds (its process ended without closing) is removed on the way.
    ///
    /// The directory is opened once, without following a final link, and
    /// every file is opened and removed relative to that descriptor
    /// (`openat`, `unlinkat`, never following a link): a folder swapped for
    /// a link meanwhile cannot steer the removal elsewhere (S19,
    /// <doc:StoreGuarantees>). The caller checks a link at `directory`
    /// first and passes its target.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)``,
    ///   with `ENOENT` when there is no directory.
    static func heldRegistrations(in directory: String) throws -> [String] {
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if folder < 0 { throw openError("open directory", directory, code: errno) }
        defer { close(folder) }
        let listing = dup(folder)
        guard listing >= 0, let stream = fdopendir(listing) else {
            let code = errno
            if listing >= 0 { close(listing) }
            throw ioError("open directory", directory, code: code)
        }
        defer { closedir(stream) }
        var held: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".json"), !name.hasPrefix(".") else { continue }
            let file = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if file < 0 { continue }
            defer { close(file) }
            if flock(file, LOCK_EX | LOCK_NB) != 0 {
                if errno == EWOULDBLOCK { held.append(name) }
                continue
            }
            if unlinkat(folder, name, 0) == 0 && DiskRecorder.isOn {
                DiskRecorder.record(.unlink(path: recordedAbsolute(directory + "/" + name)))
            }
        }
        return held
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
