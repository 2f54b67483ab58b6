#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Following a store's symlinks only where that is safe
/// (S10, S19, <doc:StoreGuarantees>).
extension Platform {
    /// Follows symlinks in the last component of `path`, as
    /// ``resolveSymlinks(_:)`` does, but checks every hop first: a link is
    /// followed only when it belongs to the caller, or when it lies in a
    /// directory of the caller's own, or when it belongs to root; and in a
    /// directory that others can write (mode o+w or g+w), only when it
    /// belongs to the caller or to the directory's owner (the kernel's
    /// `protected_symlinks` rule). So root never follows a link that the
    /// user owning a service's directory planted there.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)`` with
    ///   `EACCES`, naming the link and its owner, for a link that may not be
    ///   followed.
    static func resolveSymlinksSafely(_ path: String) throws -> String {
        var current = path
        for _ in 0..<40 {
            guard let target = linkTarget(current) else { return current }
            try checkLinkMayBeFollowed(current)
            current = target.hasPrefix("/") ? target : parentDirectory(of: current) + "/" + target
        }
        throw ioError("follow symlink", path, code: ELOOP)
    }

    /// Throws, as ``resolveSymlinksSafely(_:)`` does, when `path` is a link
    /// the caller may not follow; for a file or directory beside a store
    /// that is used under its own name.
    static func checkLinks(_ path: String) throws {
        _ = try resolveSymlinksSafely(path)
    }

    private static func checkLinkMayBeFollowed(_ link: String) throws {
        var info = systemStat()
        guard lstat(link, &info) == 0 else { throw ioError("stat", link) }
        let directory = parentDirectory(of: link)
        guard let parent = try fileStamp(directory) else { return }
        let caller = UInt32(geteuid())
        let owner = UInt32(info.st_uid)
        if owner == caller { return }
        if parent.mode & 0o022 != 0 && owner != parent.uid {
            throw PreferencesError.io(
                operation: "follow symlink", path: link, code: EACCES,
                message:
                    "it belongs to \(userName(owner)) in \(directory), a directory others can write; "
                    + "there only links of the caller or of the directory's owner are followed")
        }
        if owner != 0 && parent.uid != caller {
            throw PreferencesError.io(
                operation: "follow symlink", path: link, code: EACCES,
                message:
                    "it belongs to \(userName(owner)) in \(directory), a directory of "
                    + "\(userName(parent.uid)); another user's link is followed only in the "
                    + "caller's own directories")
        }
    }

    /// The error for a file beside a store that is opened without following
    /// links (`O_NOFOLLOW`) and turned out to be one; any other failure of
    /// that open as ``ioError(_:_:code:)`` says it.
    static func openError(_ operation: String, _ path: String, code: Int32) -> PreferencesError {
        var info = systemStat()
        guard code == ELOOP, lstat(path, &info) == 0,
            UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFLNK)
        else { return ioError(operation, path, code: code) }
        return .io(
            operation: operation, path: path, code: code,
            message:
                "it is a symbolic link, of \(userName(UInt32(info.st_uid))), and the store follows "
                + "no link there")
    }

    /// `lstat` of a file beside a store that is never followed as a link
    /// (the history): nil when nothing is there.
    ///
    /// - Throws: ``openError(_:_:code:)``'s error when it is a symbolic link.
    static func sideFileStamp(_ path: String) throws -> FileStamp? {
        var info = systemStat()
        if lstat(path, &info) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw ioError("stat", path, code: code)
        }
        if UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFLNK) {
            throw openError("open", path, code: ELOOP)
        }
        return stamp(info)
    }

    /// "name (uid N)", or "uid N" for a user without a name.
    static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid_t(uid)), let name = entry.pointee.pw_name else {
            return "uid \(uid)"
        }
        return "\(String(cString: name)) (uid \(uid))"
    }
}

extension Platform {
    /// Whether anything, a dangling symlink included, is at `path`.
    static func exists(_ path: String) -> Bool {
        var info = systemStat()
        return lstat(path, &info) == 0
    }
}
