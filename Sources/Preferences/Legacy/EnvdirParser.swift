/// Reads a daemontools `envdir` directory: one file per key.
///
/// Entries whose name starts with `.` are skipped silently (as `envdir`
/// does); names holding `=`, subdirectories and other non-regular files are
/// skipped with a warning. A 0-byte file means the key is absent (`envdir`
/// unsets the variable). Otherwise the value is the bytes up to the first
/// `\n`, with trailing spaces and tabs removed and each NUL turned into `\n`;
/// a `\r` is kept. The value must be UTF-8.
enum EnvdirParser {
    /// One directory entry, as listed by ``LegacyReader``.
    struct Entry: Sendable, Equatable {
        /// What kind of file the entry is (symbolic links followed).
        typealias Kind = Platform.EntryKind

        var name: String
        var kind: Kind
        /// The file's bytes (empty for anything but a regular file).
        var contents: [UInt8]
    }

    /// Builds the values of the entries of `directory`.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   naming the entry whose value is not valid UTF-8.
    static func parse(_ entries: [Entry], directory: String) throws -> LegacyContents {
        var values: [String: PreferenceValue] = [:]
        var warnings: [String] = []
        for entry in entries.sorted(by: { $0.name < $1.name }) {
            if entry.name.hasPrefix(".") { continue }
            let path =
                directory.hasSuffix("/") ? directory + entry.name : directory + "/" + entry.name
            if entry.name.contains("=") {
                warnings.append("skipped \(path): a variable name cannot contain '='")
                continue
            }
            switch entry.kind {
            case .directory:
                warnings.append("skipped \(path): it is a directory")
                continue
            case .other:
                warnings.append("skipped \(path): it is not a regular file")
                continue
            case .regular:
                break
            }
            if entry.contents.isEmpty { continue }
            var line = Array(entry.contents.prefix { $0 != 0x0A })
            while let last = line.last, last == 0x20 || last == 0x09 { line.removeLast() }
            for index in line.indices where line[index] == 0 { line[index] = 0x0A }
            guard let text = String(validating: line, as: UTF8.self) else {
                var lines = 0
                let offset = PropertiesParser.firstInvalidUTF8(line, lines: &lines) ?? line.count
                throw PreferencesError.legacyFormat(
                    file: path, line: 1, column: nil,
                    reason:
                        "the value of '\(entry.name)' is not valid UTF-8 (byte offset \(offset))")
            }
            values[entry.name] = .string(text)
        }
        return LegacyContents(values: values, warnings: warnings)
    }
}
