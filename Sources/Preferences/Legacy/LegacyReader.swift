#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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

    // MARK: - Files

    /// Legacy files larger than this are refused rather than read into memory.
    static let maxFileSize = 256 << 20

    private static func exists(_ path: String) -> Bool {
        (try? Platform.fileStamp(path)) != nil
    }

    /// The whole content of the regular file at `path`.
    static func readFile(_ path: String) throws -> [UInt8] {
        guard let (bytes, _) = try Platform.readFile(path, limit: maxFileSize) else {
            throw Platform.ioError("open", path, code: Platform.notFound)
        }
        return bytes
    }

    /// The entries of the envdir at `path`, symbolic links followed as
    /// `envdir` follows them when it opens each file.
    private static func listDirectory(_ path: String) throws -> [EnvdirParser.Entry] {
        try Platform.listDirectory(path).map { name, kind in
            let entryPath = path.hasSuffix("/") ? path + name : path + "/" + name
            // Hidden entries and names with '=' are skipped by the parser unread.
            let read = kind == .regular && !name.hasPrefix(".") && !name.contains("=")
            return EnvdirParser.Entry(
                name: name, kind: kind, contents: read ? try readFile(entryPath) : [])
        }
    }
}
