#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A migration that imports a legacy flat key source — a Java properties
/// file, an Android SharedPreferences XML file, an Apple property list
/// (such as a UserDefaults plist), an envdir directory or a JSON object —
/// into the store once, at start-up (M3, <doc:MigratingAtStartUp>).
///
/// It runs while the source exists. It reads the source (nothing is
/// imported from a malformed one: the open fails with an error naming the
/// file, line and column), picks the selected keys, renames them, converts
/// strings into the declared types, and adds them to the store without
/// overwriting keys already stored (unless told to). Once the new file is
/// durable, it renames the source to `<name>.migrated` (or removes it),
/// together with a shared-prefs `.bak` sibling.
///
/// ```swift
/// extension PreferenceKeys {
///     static let darkMode = PreferenceKey<Bool>("dark_mode", default: false)
///     static let mapZoom = PreferenceKey<Double>("map_zoom", default: 14)
/// }
///
/// let store = try await PreferencesStore(
///     fileURL: url,
///     migrations: [
///         LegacyImport(
///             .properties, at: URL(fileURLWithPath: "/etc/myapp/app.properties"),
///             keys: .prefix("ui.", removingPrefix: true),   // ui.dark_mode → dark_mode
///             renames: ["ui.zoom": "map_zoom"],
///             types: [.darkMode, .mapZoom])                  // "true" → true, "14.5" → 14.5
///     ])
/// ```
///
/// Running it twice changes nothing the second time: the source is gone, and
/// were it still there (a crash between the write and the clean-up), keys
/// already stored win. When later migrations in the same list change the
/// imported keys, give the import a `version` so that a rerun after such a
/// crash skips the import and only cleans up.
public struct LegacyImport: PreferencesMigration {
    /// The source's format.
    public let format: LegacyFormat
    /// The source file (the directory for an envdir).
    public let source: URL
    /// The character encoding of a properties file.
    public let encoding: PropertiesEncoding
    /// Which keys of the source to import.
    public let selection: KeySelection
    /// New names by the key's name in the source; they take precedence over
    /// a selection's prefix removal.
    public let renames: [String: String]
    /// The declared types of the stored keys (after renaming).
    public let types: KeyTypes
    /// What happens to a key that is already stored.
    public let conflicts: ConflictRule
    /// What happens to the source once its data is durable in the store.
    public let afterImport: SourceCleanUp
    /// When set, the import applies only to files whose data version is
    /// below it, and raises their version to it.
    public let version: Int?

    /// An import of the source at `url` in `format`.
    ///
    /// - Parameters:
    ///   - format: the source's format.
    ///   - url: the legacy file (for envdir, the directory).
    ///   - encoding: for properties files: UTF-8 (default) or ISO-8859-1.
    ///   - keys: all keys (default), a list, or those with a prefix.
    ///   - renames: new names by the key's name in the source.
    ///   - types: declared types of the stored keys: typed keys
    ///     (`[.darkMode, .mapZoom]`) or types by name (`["zoom": .double]`).
    ///     A value that does not convert fails the import, naming the key and the value.
    ///   - conflicts: `.keepStored` (default) leaves keys already stored as they are.
    ///   - afterImport: `.rename` (default) to `<name>.migrated`, or `.remove`.
    ///   - version: optional data version of the import (see ``version``).
    public init(
        _ format: LegacyFormat, at url: URL, encoding: PropertiesEncoding = .utf8,
        keys: KeySelection = .all, renames: [String: String] = [:], types: KeyTypes = [:],
        conflicts: ConflictRule = .keepStored, afterImport: SourceCleanUp = .rename,
        version: Int? = nil
    ) {
        self.format = format
        self.source = url
        self.encoding = encoding
        self.selection = keys
        self.renames = renames
        self.types = types
        self.conflicts = conflicts
        self.afterImport = afterImport
        self.version = version
    }

    /// "import <format> <path>".
    public var name: String { "import \(format.rawValue) \(source.path)" }

    /// True while the source (or a shared-prefs `.bak`) exists.
    public func shouldMigrate(_ current: PreferencesSnapshot) throws -> Bool {
        try LegacyImport.existingFiles(format, at: source).isEmpty == false
    }

    /// Reads the source and adds its selected, renamed and typed values.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   for a malformed source or a value that does not fit its declared
    ///   type; ``PreferencesError/io(operation:path:code:message:)`` when the
    ///   source cannot be read. A source that has vanished is nothing to do.
    public func migrate(_ preferences: inout MutablePreferences) throws {
        if let version, preferences.version >= version { return }
        let contents: LegacyContents
        do {
            contents = try LegacyReader.read(format, at: source, encoding: encoding)
        } catch PreferencesError.io(_, _, let code, _) where code == Platform.notFound {
            return
        }
        try importValues(contents, into: &preferences)
        for warning in contents.warnings {
            preferences.report("importing \(source.path): \(warning)")
        }
        if let version { preferences.version = max(preferences.version, version) }
    }

    /// Adds the selected, renamed and typed `contents` to `preferences` under
    /// the conflict rule, in one step, and returns the values it stored and
    /// the keys it kept; the part of ``migrate(_:)`` after reading, for tools
    /// that read the source themselves (`prefs import`). A null is no value.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   naming the file and the first key (by bytes) that would be imported
    ///   twice, that the store cannot hold, or whose value does not convert;
    ///   nothing is changed then.
    @discardableResult
    public func importValues(
        _ contents: LegacyContents, into preferences: inout MutablePreferences
    ) throws -> (imported: [String: PreferenceValue], kept: Set<String>) {
        func failure(_ reason: String) -> PreferencesError {
            .legacyFormat(file: source.path, line: nil, column: nil, reason: reason)
        }
        func offered(
            _ source: some Sequence<(key: String, value: PreferenceValue)>
        ) throws -> [String: PreferenceValue] {
            var values: [String: PreferenceValue] = [:]
            values.reserveCapacity(contents.values.count)
            var renamed: [String: String] = [:]  // stored name → source name, where they differ
            for (name, value) in source where value != .null {
                guard let selected = selection.storedName(name) else { continue }
                let target = renames[name] ?? selected
                if let problem = preferences.limits.problem(withKey: target) {
                    let shown = target.debugDescription.dropFirst().dropLast()  // escaped
                    throw failure("key '\(shown)' cannot be stored: \(problem)")
                }
                var typed = value
                if let type = types[target] {
                    guard let converted = type.convert(value) else {
                        throw failure(type.mismatch(key: target, value: value))
                    }
                    typed = converted
                }
                guard typed != .null else { continue }
                if values.updateValue(typed, forKey: target) != nil {
                    let earlier = renamed[target] ?? target
                    throw failure(
                        "keys '\(earlier)' and '\(name)' would both be imported as '\(target)'")
                }
                if target != name { renamed[target] = name }
            }
            return values
        }
        // Sorted only to name the first problem in byte order, whatever the dictionary's order.
        var values =
            try (try? offered(contents.values))
            ?? offered(
                contents.values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        var kept: Set<String> = []
        if conflicts == .keepStored && !preferences.values.isEmpty {
            kept = Set(values.keys.filter { preferences[raw: $0] != nil })
            for key in kept { values[key] = nil }
        }
        try preferences.merge(values)
        return (values, kept)
    }

    /// Renames or removes the source files (the file, then a `.bak`), and
    /// makes that durable.
    ///
    /// Each file's rename is made durable before the next one: a power cut
    /// may keep a later rename of a directory and lose an earlier one, and
    /// a `.bak` renamed while the file beside it is not would leave that
    /// file, which Android had only begun to write, to be imported at the
    /// next open. A file to remove is first renamed aside
    /// (`<name>.removing`) and the rename made durable, then removed: a
    /// crash while a file is removed may leave it cut short, and under its
    /// own name it would be imported again, cut short.
    public func cleanUp() throws {
        let directory = Platform.parentDirectory(of: source.path)
        let files = try LegacyImport.existingFiles(format, at: source)
        for (index, file) in files.enumerated() {
            if index > 0 { try Platform.syncDirectory(directory) }
            switch afterImport {
            case .rename:
                try Platform.replaceItem(at: file.path + ".migrated", with: file.path)
            case .remove:
                try Platform.replaceItem(at: file.path + ".removing", with: file.path)
            }
        }
        try Platform.syncDirectory(directory)
        guard afterImport == .remove else { return }
        for file in files { try Platform.removeItem(file.path + ".removing") }
        try Platform.syncDirectory(directory)
    }

    /// The files of the source that exist now, the main file first: renaming
    /// it first means a crash between the two renames leaves the `.bak`,
    /// which is what was imported.
    static func existingFiles(_ format: LegacyFormat, at url: URL) throws -> [URL] {
        try LegacyReader.sourceFiles(format, at: url).filter { try Platform.itemExists($0.path) }
    }
}
