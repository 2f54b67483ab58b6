#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Listing a directory (for envdir sources).
extension Platform {
    /// What a directory entry is, symbolic links followed.
    enum EntryKind: Sendable {
        case regular, directory, other
    }

    /// The names in the directory at `path` (without `.` and `..`), in the
    /// directory's order, without looking at the entries.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)``, with
    ///   `ENOTDIR` when `path` is not a directory.
    static func entryNames(_ path: String) throws -> [String] {
        guard let info = try fileStamp(path) else { throw ioError("open", path, code: ENOENT) }
        guard info.isDirectory else { throw ioError("open", path, code: ENOTDIR) }
        guard let directory = opendir(path) else { throw ioError("open", path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The names in the directory at `path` (without `.` and `..`), sorted,
    /// each with its kind; a dangling link is `.other`.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)``, with
    ///   `ENOTDIR` when `path` is not a directory.
    static func listDirectory(_ path: String) throws -> [(name: String, kind: EntryKind)] {
        return try entryNames(path).sorted().map { name in
            let entryPath = path.hasSuffix("/") ? path + name : path + "/" + name
            guard let stamp = try? fileStamp(entryPath) else { return (name, .other) }
            if stamp.isRegularFile { return (name, .regular) }
            if stamp.isDirectory { return (name, .directory) }
            return (name, .other)
        }
    }
}
