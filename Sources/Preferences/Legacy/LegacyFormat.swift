/// A legacy flat key source that a migration can import
/// (M5, <doc:MigratingAtStartUp>).
///
/// The raw values are the names `prefs import --format` accepts:
///
/// ```swift
/// let format = LegacyFormat(rawValue: "shared-prefs")  // .sharedPrefs
/// ```
public enum LegacyFormat: String, Sendable, CaseIterable {
    /// Java-style `key=value` files, read as `java.util.Properties.load` does.
    case properties
    /// Android SharedPreferences XML (`shared_prefs/<name>.xml`).
    case sharedPrefs = "shared-prefs"
    /// Apple property lists, XML or binary, whose root is a dictionary.
    case plist
    /// A daemontools `envdir` directory: one file per key.
    case envdir
    /// A JSON object whose members are the values.
    case json
}

/// The character encoding of a properties file.
///
/// ```swift
/// let contents = try LegacyReader.read(.properties, at: url, encoding: .iso8859_1)
/// ```
public enum PropertiesEncoding: String, Sendable {
    /// UTF-8, as `Properties.load(Reader)` with a UTF-8 reader (the default).
    case utf8 = "utf-8"
    /// ISO-8859-1, as `Properties.load(InputStream)`: each byte is one character.
    case iso8859_1 = "iso-8859-1"
}

/// What an importer read from a legacy source.
///
/// `values` holds the keys and their values (all strings for properties and
/// envdir sources); `warnings` lists what was skipped without making the
/// source invalid, such as subdirectories of an envdir directory.
///
/// ```swift
/// let contents = try LegacyReader.read(.envdir, at: URL(fileURLWithPath: "/service/env"))
/// for warning in contents.warnings { print("warning:", warning) }
/// ```
public struct LegacyContents: Sendable, Equatable {
    /// The values read, by key.
    public var values: [String: PreferenceValue]
    /// Non-fatal problems, one sentence each, in a stable order.
    public var warnings: [String]

    /// Creates contents from values and warnings.
    public init(values: [String: PreferenceValue], warnings: [String] = []) {
        self.values = values
        self.warnings = warnings
    }
}
