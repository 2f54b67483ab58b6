#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// File operations of a legacy import's clean-up.
extension Platform {
    /// `ENOENT`: nothing at the path.
    static let notFound: Int32 = ENOENT
    /// `ENOTDIR`: a directory on the path is a file, so nothing is there.
    static let notADirectory: Int32 = ENOTDIR

    /// Whether anything (a file, a directory, a link) is at `path`, without
    /// following a final symbolic link.
    static func itemExists(_ path: String) throws -> Bool {
        var info = stat()
        if lstat(path, &info) == 0 { return true }
        let code = errno
        if code == ENOENT || code == ENOTDIR { return false }
        throw ioError("stat", path, code: code)
    }

    /// Removes the file, link or directory tree at `path`; nothing there is fine.
    static func removeItem(_ path: String) throws {
        guard try itemExists(path) else { return }
        var info = stat()
        if lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
            try removeTree(path)
            return
        }
        try remove(path)
    }

    /// Removes the directory at `path` and everything in it, links not
    /// followed; each entry's removal, and the directory's own, is recorded
    /// as an unlink, as a power cut may keep some and lose others.
    private static func removeTree(_ path: String) throws {
        for name in try entryNames(path) {
            let entry = path + "/" + name
            var info = stat()
            if lstat(entry, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                try removeTree(entry)
            } else {
                try remove(entry)
            }
        }
        if rmdir(path) != 0 {
            if errno != ENOENT { throw ioError("remove", path) }
        } else if DiskRecorder.isOn {
            DiskRecorder.record(.unlink(path: recordedAbsolute(path)))
        }
    }

    /// Renames `source` to `target`, first removing a directory already at
    /// `target` (a file there is replaced by the rename itself).
    static func replaceItem(at target: String, with source: String) throws {
        var info = stat()
        if lstat(target, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
            try removeItem(target)
        }
        try rename(source, target)
    }
}
