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
    /// ``resolveSymlinks(_:)`` does, but applies the kernel's
    /// `protected_symlinks` rule on every hop: in a directory that others can
    /// write (mode o+w or g+w), a link is followed only when it belongs to
    /// the caller or to the directory's owner.
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

    private static func checkLinkMayBeFollowed(_ link: String) throws {
        var info = systemStat()
        guard lstat(link, &info) == 0 else { throw ioError("stat", link) }
        let directory = parentDirectory(of: link)
        guard let parent = try fileStamp(directory) else { return }
        let writableByOthers = parent.mode & 0o022 != 0
        let owner = UInt32(info.st_uid)
        if !writableByOthers || owner == UInt32(geteuid()) || owner == parent.uid { return }
        throw PreferencesError.io(
            operation: "follow symlink", path: link, code: EACCES,
            message:
                "it belongs to \(userName(owner)) in \(directory), a directory others can write; "
                + "there only links of the caller or of the directory's owner are followed")
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
