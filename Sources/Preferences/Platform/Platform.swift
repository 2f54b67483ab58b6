#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The only place that makes system calls. Everything above it is portable
/// Swift; every call here reports failure as ``PreferencesError/io``.
enum Platform {
    /// Identity and change stamp of a file, from `stat`.
    struct FileStamp: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64
        var changedSeconds: Int64
        var changedNanoseconds: Int64
        var isRegularFile: Bool
        var isDirectory: Bool
        var mode: UInt32
        var uid: UInt32
        var gid: UInt32

        /// Whether a later change could leave this stamp as it is ("racily
        /// clean", as git calls it): its modification or change time is not
        /// older than `now`, a ``Platform/fileClockNow()`` read before the
        /// stamp was taken, by one timestamp tick. A file system that keeps
        /// whole seconds (both times without nanoseconds) has a tick of two
        /// seconds (FAT's), any other one of a nanosecond: the file clock has
        /// moved on, so any later change is stamped later.
        func isRacy(at now: Int64) -> Bool {
            let modified = modifiedSeconds * 1_000_000_000 + modifiedNanoseconds
            let changed = changedSeconds * 1_000_000_000 + changedNanoseconds
            let tick: Int64 =
                modifiedNanoseconds == 0 && changedNanoseconds == 0 ? 2_000_000_000 : 1
            return now - max(modified, changed) < tick
        }
    }

    /// A moment on the clock file systems stamp files with, in nanoseconds
    /// since 1970.
    ///
    /// Linux stamps files from the coarse real-time clock, which moves once
    /// per scheduler tick; reading that clock gives a moment no file written
    /// afterwards can be stamped before. Darwin has no such clock: the fine
    /// clock less 10 ms stands in for it.
    static func fileClockNow() -> Int64 {
        var now = timespec()
        #if canImport(Darwin)
            clock_gettime(CLOCK_REALTIME, &now)
            return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - 10_000_000
        #else
            clock_gettime(CLOCK_REALTIME_COARSE, &now)
            return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        #endif
    }

    static var errno: Int32 {
        #if canImport(Glibc)
            Glibc.errno
        #elseif canImport(Musl)
            Musl.errno
        #else
            Darwin.errno
        #endif
    }

    /// `EISDIR`: a directory where a file should be.
    static let isADirectory: Int32 = EISDIR

    /// Whether `code` is `EACCES` or `EPERM`: the caller lacks the right.
    static func isPermissionDenied(_ code: Int32) -> Bool {
        code == EACCES || code == EPERM
    }

    static func message(for code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func ioError(_ operation: String, _ path: String, code: Int32 = Platform.errno)
        -> PreferencesError
    {
        .io(operation: operation, path: path, code: code, message: message(for: code))
    }

    /// `stat` following symlinks; nil when nothing is at `path`.
    static func fileStamp(_ path: String) throws -> FileStamp? {
        var info = systemStat()
        let result = stat(path, &info)
        if result != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw ioError("stat", path, code: code)
        }
        return stamp(info)
    }

    static func fileStamp(descriptor: Int32, path: String) throws -> FileStamp {
        var info = systemStat()
        let result = fstat(descriptor, &info)
        if result != 0 { throw ioError("stat", path) }
        return stamp(info)
    }

    static func systemStat() -> stat {
        #if canImport(Darwin)
            Darwin.stat()
        #elseif canImport(Musl)
            Musl.stat()
        #else
            Glibc.stat()
        #endif
    }

    static func stamp(_ info: stat) -> FileStamp {
        #if canImport(Darwin)
            let modified = info.st_mtimespec
            let changed = info.st_ctimespec
        #else
            let modified = info.st_mtim
            let changed = info.st_ctim
        #endif
        let type = UInt32(info.st_mode) & UInt32(S_IFMT)
        return FileStamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modifiedSeconds: Int64(modified.tv_sec), modifiedNanoseconds: Int64(modified.tv_nsec),
            changedSeconds: Int64(changed.tv_sec), changedNanoseconds: Int64(changed.tv_nsec),
            isRegularFile: type == UInt32(S_IFREG), isDirectory: type == UInt32(S_IFDIR),
            mode: UInt32(info.st_mode) & 0o7777, uid: UInt32(info.st_uid), gid: UInt32(info.st_gid))
    }

    /// Reads a whole regular file. nil when it does not exist.
    ///
    /// With `followingSymlinks: false` a symlink at `path` is an error
    /// (`ELOOP`): the store resolves its links itself, checking each
    /// (S19, <doc:StoreGuarantees>), and must not follow one planted after
    /// that check.
    static func readFile(_ path: String, limit: Int, followingSymlinks: Bool = true) throws -> (
        bytes: [UInt8], stamp: FileStamp
    )? {
        // O_NONBLOCK so that a FIFO at the path cannot hang the open.
        let descriptor = open(
            path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingSymlinks ? 0 : O_NOFOLLOW))
        if descriptor < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw followingSymlinks
                ? ioError("open", path, code: code) : openError("open", path, code: code)
        }
        defer { close(descriptor) }
        let info = try fileStamp(descriptor: descriptor, path: path)
        if info.isDirectory { throw ioError("read", path, code: EISDIR) }
        if !info.isRegularFile {
            throw PreferencesError.io(
                operation: "read", path: path, code: EINVAL, message: "not a regular file")
        }
        if info.size > Int64(limit) {
            throw PreferencesError.corrupted(
                file: path, reason: "file is \(info.size) bytes, over the limit of \(limit) bytes")
        }
        // One chunk of the file's size plus one byte (not zero-filled): a
        // file that did not grow since `fstat` is read in one call.
        var bytes = [UInt8]()
        bytes.reserveCapacity(Int(info.size) + 1)
        let capacity = max(Int(info.size) + 1, 4096)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = read(descriptor, chunk.baseAddress, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit {
                throw PreferencesError.corrupted(
                    file: path, reason: "file is over the limit of \(limit) bytes")
            }
            // A regular file returns less than asked for only at its end;
            // a file that states no size (/proc) hands out a page at a time
            // and is read until a read returns nothing.
            if count < capacity && info.size > 0 { break }
        }
        return (bytes, info)
    }

    /// Replaces `target` with `bytes`: writes them to a new file with an
    /// unpredictable name in the same directory, fsyncs it, and renames it
    /// over `target`. Returns the new file's stamp, taken from its own
    /// descriptor after the rename (nil in the unlikely case that `fstat`
    /// fails then: the file is in place all the same). The caller fsyncs the
    /// directory.
    static func replaceFile(
        _ target: String, with bytes: [UInt8], mode: UInt32 = 0o600,
        owner: (uid: UInt32, gid: UInt32)? = nil
    ) throws -> FileStamp? {
        let directory = parentDirectory(of: target)
        let prefix = lastComponent(of: target)
        var attempts = 0
        while true {
            let path = directory + "/." + prefix + "." + randomSuffix() + ".tmp"
            let descriptor = open(
                path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            if descriptor < 0 {
                let code = errno
                attempts += 1
                if code == EEXIST && attempts < 16 { continue }
                throw ioError("create a temporary file in", directory, code: code)
            }
            defer { close(descriptor) }
            if DiskRecorder.isOn {
                recordCall(descriptor, fallback: path) { .create(path: $0, mode: mode) }
            }
            do {
                // open(2) applies the umask; make the mode exact before the
                // data, so the one fsync below covers mode, owner and bytes.
                try changeMode(descriptor, mode, path: path)
                // As root (`sudo prefs set`), keep the service's file its own
                // (S14, <doc:StoreGuarantees>).
                if let owner, geteuid() == 0, owner.uid != 0 || owner.gid != getegid() {
                    changeOwner(descriptor, owner, path: path)
                }
                try writeAll(descriptor, bytes, path: path)
                if syncToDisk(descriptor) != 0 { throw ioError("fsync", path) }
                try rename(path, target)
            } catch {
                unlinkQuietly(path)
                throw error
            }
            // The rename changed the file's change time: stamp it now, from
            // the descriptor, not from a second look at the path.
            return try? fileStamp(descriptor: descriptor, path: target)
        }
    }

    /// fsync, and on Darwin `F_FULLFSYNC`, which also asks the drive to
    /// write its cache (plain fsync there only hands the data to the drive).
    static func syncToDisk(_ descriptor: Int32) -> Int32 {
        if DiskRecorder.isOn { recordSync(descriptor) }
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }

    /// `fchmod`.
    static func changeMode(_ descriptor: Int32, _ mode: UInt32, path: String) throws {
        if fchmod(descriptor, mode_t(mode)) != 0 { throw ioError("chmod", path) }
        if DiskRecorder.isOn {
            recordCall(descriptor, fallback: path) { .changeMode(path: $0, mode: mode) }
        }
    }

    /// `fchown`, whose failure is left to the caller to ignore.
    static func changeOwner(_ descriptor: Int32, _ owner: (uid: UInt32, gid: UInt32), path: String)
    {
        guard fchown(descriptor, uid_t(owner.uid), gid_t(owner.gid)) == 0 else { return }
        if DiskRecorder.isOn {
            recordCall(descriptor, fallback: path) {
                .changeOwner(path: $0, uid: owner.uid, gid: owner.gid)
            }
        }
    }

    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let start = DiskRecorder.isOn ? writeOffset(descriptor) : 0
            let written = bytes.withUnsafeBytes {
                write(descriptor, $0.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw ioError("write", path)
            }
            if DiskRecorder.isOn {
                let part = Array(bytes[offset..<offset + written])
                recordCall(descriptor, fallback: path) {
                    .write(path: $0, offset: start, bytes: part)
                }
            }
            offset += written
        }
    }

    /// 12 random characters from `[a-z0-9]` (62 bits), from one system call.
    static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        var bits = generator.next()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var characters = [UInt8]()
        characters.reserveCapacity(12)
        for _ in 0..<12 {
            characters.append(alphabet[Int(bits % 36)])
            bits /= 36
        }
        return String(decoding: characters, as: UTF8.self)
    }

    static func rename(_ from: String, _ to: String) throws {
        #if canImport(Darwin)
            let result = Darwin.rename(from, to)
        #else
            let result = Glibc.rename(from, to)
        #endif
        if result != 0 { throw ioError("rename \(from) to", to) }
        if DiskRecorder.isOn {
            DiskRecorder.record(.rename(from: recordedAbsolute(from), to: recordedAbsolute(to)))
        }
    }

    static func unlinkQuietly(_ path: String) {
        if unlink(path) == 0 && DiskRecorder.isOn {
            DiskRecorder.record(.unlink(path: recordedAbsolute(path)))
        }
    }

    static func remove(_ path: String) throws {
        if unlink(path) != 0 {
            if errno != ENOENT { throw ioError("remove", path) }
        } else if DiskRecorder.isOn {
            DiskRecorder.record(.unlink(path: recordedAbsolute(path)))
        }
    }

    /// fsync of a directory, so a rename inside it is durable.
    static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0 { throw ioError("open directory", path) }
        defer { close(descriptor) }
        if let code = injectedFault(.directorySync, at: path) {
            throw ioError("fsync directory", path, code: code)
        }
        if syncToDisk(descriptor) != 0 {
            let code = errno
            // Some file systems cannot fsync directories; the rename is as durable as they allow.
            if code != EINVAL && code != ENOTSUP {
                throw ioError("fsync directory", path, code: code)
            }
        }
    }

    /// Creates `path` and any missing parents with mode 0700, given to
    /// `owner` when running as root; returns the directories it created,
    /// outermost first. The caller makes each durable in its parent.
    @discardableResult
    static func makeDirectories(_ path: String, owner: (uid: UInt32, gid: UInt32)? = nil) throws
        -> [String]
    {
        if let info = try fileStamp(path) {
            if info.isDirectory { return [] }
            throw ioError("create directory", path, code: ENOTDIR)
        }
        let parent = parentDirectory(of: path)
        var created = parent != path ? try makeDirectories(parent, owner: owner) : []
        if mkdir(path, 0o700) != 0 {
            if errno != EEXIST { throw ioError("create directory", path) }
            return created
        }
        if DiskRecorder.isOn { DiskRecorder.record(.makeDirectory(path: recordedAbsolute(path))) }
        if let owner, geteuid() == 0, owner.uid != 0 || owner.gid != getegid() {
            // lchown: should the new directory have been swapped for a link,
            // the link changes owner, not what it points to.
            if lchown(path, uid_t(owner.uid), gid_t(owner.gid)) == 0 && DiskRecorder.isOn {
                DiskRecorder.record(
                    .changeOwner(path: recordedAbsolute(path), uid: owner.uid, gid: owner.gid))
            }
        }
        created.append(path)
        return created
    }

    static func parentDirectory(of path: String) -> String {
        // On the UTF-8 view: a byte search, not a search by characters.
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    static func lastComponent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// What the symlink at `path` points to, as written in the link; nil
    /// when `path` is no link.
    static func linkTarget(_ path: String) -> String? {
        // readlink fills only what it returns: the buffer is not cleared
        // first (every open, read and write of a store resolves its file).
        var buffer = [UInt8](unsafeUninitializedCapacity: 4096) { _, count in count = 4096 }
        let count = buffer.withUnsafeMutableBytes { raw in
            readlink(path, raw.baseAddress!.assumingMemoryBound(to: CChar.self), 4096)
        }
        return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Follows symlinks in the last component; the path stays as given when
    /// it is not a link.
    static func resolveSymlinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            guard let target = linkTarget(current) else { return current }
            current = target.hasPrefix("/") ? target : parentDirectory(of: current) + "/" + target
        }
        return current
    }

    /// The canonical absolute form of an existing directory.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func currentDirectory() -> String {
        guard let directory = getcwd(nil, 0) else { return "/" }
        defer { free(directory) }
        return String(cString: directory)
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    static func homeDirectory() -> String {
        if let home = environment("HOME"), !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            return String(cString: directory)
        }
        return "/"
    }

    // MARK: Time

    /// Broken-down UTC time for whole seconds since 1970.
    static func utcComponents(_ seconds: Int64) -> (
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    ) {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return (
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec)
        )
    }

    /// Seconds since 1970 for a UTC calendar time.
    static func utcSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
        -> Int64
    {
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Int64(timegm(&parts))
    }
}
