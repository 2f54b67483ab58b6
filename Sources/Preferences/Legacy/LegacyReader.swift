import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a legacy settings source from disk: the only I/O of the importers.
///
/// The parsers themselves are pure functions of bytes; this type reads the
/// file (or, for an envdir, lists the directory) and hands the bytes over.
/// For shared-prefs, a sibling `<file>.bak` is read instead of the file when
/// it exists, because Android treats the main file as a half-finished write.
///
/// ```swift
/// let contents = try LegacyReader.read(.properties, at: URL(fileURLWithPath: "app.properties"))
/// print(contents.values["server.port"] ?? "unset")
/// ```
public enum LegacyReader {
    /// Reads the source at `url` in `format`.
    ///
    /// - Parameters:
    ///   - format: the source's format.
    ///   - url: the file (or, for envdir, the directory).
    ///   - encoding: used by the properties format only.
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)`` when the
    ///   source cannot be read (missing, permission denied, a directory where a
    ///   file is expected), ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   when its content is malformed; nothing is imported in either case.
    public static func read(
        _ format: LegacyFormat, at url: URL, encoding: PropertiesEncoding = .utf8
    ) throws -> LegacyContents {
        let path = url.path
        switch format {
        case .properties:
            let bytes = try readFile(path)
            return LegacyContents(
                values: try PropertiesParser.parse(bytes, encoding: encoding, file: path))
        case .sharedPrefs:
            let backup = path + ".bak"
            let source = exists(backup) ? backup : path
            return LegacyContents(
                values: try SharedPrefsParser.parse(try readFile(source), file: source))
        case .plist:
            return LegacyContents(
                values: try PropertyListParser.parse(try readFile(path), file: path))
        case .json:
            return LegacyContents(
                values: try JSONValuesParser.parse(try readFile(path), file: path))
        case .envdir:
            return try EnvdirParser.parse(try listDirectory(path), directory: path)
        }
    }

    /// The files the source consists of, for a migration's clean-up: the
    /// file itself (the directory for an envdir) and, for shared-prefs, its
    /// `.bak` sibling when one exists.
    public static func sourceFiles(_ format: LegacyFormat, at url: URL) -> [URL] {
        guard format == .sharedPrefs else { return [url] }
        let backup = URL(fileURLWithPath: url.path + ".bak")
        return exists(backup.path) ? [url, backup] : [url]
    }

    // MARK: - System calls

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func ioError(_ operation: String, _ path: String, _ code: Int32)
        -> PreferencesError
    {
        .io(operation: operation, path: path, code: code, message: String(cString: strerror(code)))
    }

    /// The whole content of the regular file at `path`.
    static func readFile(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError("open", path, errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ioError("stat", path, errno) }
        if info.st_mode & S_IFMT == S_IFDIR { throw ioError("read", path, EISDIR) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(info.st_size, 0)))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes {
                systemRead(descriptor, $0.baseAddress, $0.count)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path, errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// The entries of the envdir at `path`, symbolic links followed as
    /// `envdir` follows them when it opens each file.
    private static func listDirectory(_ path: String) throws -> [EnvdirParser.Entry] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ioError("open", path, errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw ioError("open", path, ENOTDIR) }
        guard let directory = opendir(path) else { throw ioError("open", path, errno) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(directory)
        return try names.sorted().map { name in
            let entryPath = path.hasSuffix("/") ? path + name : path + "/" + name
            var entryInfo = stat()
            guard !name.hasPrefix("."), stat(entryPath, &entryInfo) == 0 else {
                // Hidden entries are skipped unread; a dangling link is "other".
                return EnvdirParser.Entry(name: name, kind: .other, contents: [])
            }
            switch entryInfo.st_mode & S_IFMT {
            case S_IFREG:
                let contents = name.contains("=") ? [] : try readFile(entryPath)
                return EnvdirParser.Entry(name: name, kind: .regular, contents: contents)
            case S_IFDIR:
                return EnvdirParser.Entry(name: name, kind: .directory, contents: [])
            default:
                return EnvdirParser.Entry(name: name, kind: .other, contents: [])
            }
        }
    }
}

/// `read(2)`, named apart from ``LegacyReader/read(_:at:encoding:)``.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int)
    -> Int
{
    read(descriptor, buffer, count)
}
