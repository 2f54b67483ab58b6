#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock file beside a store (S3, S14, S15, <doc:StoreGuarantees>).
extension Platform {
    /// Opens (creating, 0600) `path` and takes an exclusive `flock` on it,
    /// waiting at most `timeout`; returns the descriptor that holds the lock.
    ///
    /// Running as root, the lock file is given to `owner`, so that the
    /// store's owner can still lock it after a `sudo prefs set`.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)`` with
    ///   `ETIMEDOUT` when the wait ran out, naming the process that holds the
    ///   lock where the system tells (Linux).
    static func lockExclusively(
        _ path: String, timeout: Duration, owner: (uid: UInt32, gid: UInt32)? = nil
    ) throws -> Int32 {
        let absent = DiskRecorder.isOn && (try? itemExists(path)) == false
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor < 0 { throw openError("open lock file", path, code: errno) }
        if absent { recordCall(descriptor, fallback: path) { .create(path: $0, mode: 0o600) } }
        if let owner, geteuid() == 0, let info = try? fileStamp(descriptor: descriptor, path: path),
            info.uid != owner.uid || info.gid != owner.gid
        {
            changeOwner(descriptor, owner, path: path)
        }
        // flock has no timeout: try without blocking, and pause between
        // tries (50 µs, doubling up to 5 ms) until the deadline.
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = Duration.microseconds(50)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code != EWOULDBLOCK {
                close(descriptor)
                throw ioError("lock", path, code: code)
            }
            let now = clock.now
            if now >= deadline {
                let holder = lockHolder(descriptor)
                close(descriptor)
                var message = "gave up after waiting \(seconds(timeout)) s for the lock"
                if let holder { message += "; it is held by process \(holder)" }
                throw PreferencesError.io(
                    operation: "lock", path: path, code: ETIMEDOUT, message: message)
            }
            let wait = min(pause, deadline - now)
            usleep(useconds_t(max(1, wait / .microseconds(1))))
            pause = min(pause * 2, .milliseconds(5))
        }
        return descriptor
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds =
            duration.components.seconds * 1000 + duration.components.attoseconds
            / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)" }
        return String(Double(milliseconds) / 1000)
    }

    /// The process holding an exclusive `flock` on the file open at
    /// `descriptor`, from `/proc/locks`; nil where the system does not tell.
    static func lockHolder(_ descriptor: Int32) -> Int32? {
        #if os(Linux)
            var info = systemStat()
            guard fstat(descriptor, &info) == 0 else { return nil }
            let device = UInt64(info.st_dev)
            // glibc's major() and minor().
            let major =
                ((device >> 8) & 0xfff)
                | (UInt64(UInt32(truncatingIfNeeded: device >> 32)) & ~0xfff)
            let minor = (device & 0xff) | (UInt64(UInt32(truncatingIfNeeded: device >> 12)) & ~0xff)
            let inode = UInt64(info.st_ino)
            guard let (bytes, _) = try? readFile("/proc/locks", limit: 4 << 20) else { return nil }
            // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a waiter's
            // line has "->" after the number.
            for line in bytes.split(separator: 0x0A) {
                let fields = String(decoding: line, as: UTF8.self).split(separator: " ")
                guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int32(fields[4]), pid > 0
                else { continue }
                let place = fields[5].split(separator: ":")
                guard place.count == 3, UInt64(place[0], radix: 16) == major,
                    UInt64(place[1], radix: 16) == minor, UInt64(place[2]) == inode
                else { continue }
                return pid
            }
            return nil
        #else
            return nil
        #endif
    }

    /// Releases a lock taken with ``lockExclusively(_:timeout:owner:)``.
    static func unlock(_ descriptor: Int32) {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Reads the 8-byte write generation kept in a lock file (0 when absent).
    static func readGeneration(descriptor: Int32) -> UInt64 {
        var value: UInt64 = 0
        let count = withUnsafeMutableBytes(of: &value) { pread(descriptor, $0.baseAddress, 8, 0) }
        return count == 8 ? UInt64(littleEndian: value) : 0
    }

    static func readGeneration(path: String) -> UInt64 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if descriptor < 0 { return 0 }
        defer { close(descriptor) }
        return readGeneration(descriptor: descriptor)
    }

    /// Writes the write generation, and marks the directory's fsync as due:
    /// the caller is about to rename a file into it. The mark is the byte
    /// after the generation; ``clearDirectorySyncDue(descriptor:)`` clears it
    /// once the directory is fsynced.
    static func writeGeneration(_ generation: UInt64, descriptor: Int32, path: String) throws {
        if let code = injectedFault(.generationWrite, at: path) {
            throw ioError("write lock file", path, code: code)
        }
        var bytes = [UInt8](repeating: 0, count: 9)
        withUnsafeBytes(of: generation.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        bytes[8] = 1
        let count = pwrite(descriptor, bytes, 9, 0)
        if count != 9 { throw ioError("write lock file", path) }
        if DiskRecorder.isOn {
            recordCall(descriptor, fallback: path) { .write(path: $0, offset: 0, bytes: bytes) }
        }
    }

    /// Whether a rename into the store's directory may not be durable yet:
    /// its writer died, or the directory's fsync failed, before clearing the mark.
    static func isDirectorySyncDue(descriptor: Int32) -> Bool {
        var flag: UInt8 = 0
        return pread(descriptor, &flag, 1, 8) == 1 && flag != 0
    }

    static func clearDirectorySyncDue(descriptor: Int32) {
        var flag: UInt8 = 0
        if pwrite(descriptor, &flag, 1, 8) == 1 && DiskRecorder.isOn {
            recordCall(descriptor, fallback: "?") { .write(path: $0, offset: 8, bytes: [0]) }
        }
    }

    /// An identifier of the calling thread, unique among running threads.
    static func currentThread() -> UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }
}
