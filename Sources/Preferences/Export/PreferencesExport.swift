/// A store's values written out in another format: JSON, a Java properties
/// file or an XML property list — what `prefs export` prints.
///
/// ```swift
/// let backup = try store.snapshot.exported(as: .json)
/// try backup.write(to: backupURL, atomically: true, encoding: .utf8)
///
/// let plist = try store.snapshot.export(as: .plist)
/// for warning in plist.warnings { log.warning(warning) }   // null values left out
/// ```
///
/// Keys are written in the order of their UTF-8 bytes, as the store file
/// writes them, and the text ends with a newline.
public struct PreferencesExport: Sendable, Hashable {
    /// The formats a store's values can be exported in.
    public enum Format: String, Sendable, CaseIterable {
        /// One indented JSON object of the values, in the store file's own
        /// layout (two spaces, `" : "` between key and value).
        /// ``LegacyReader`` (``LegacyFormat/json``) and `prefs import
        /// --format json` read it back.
        case json
        /// A Java properties file, escaped as `Properties.store` escapes
        /// (every character outside printable ASCII as `\uXXXX`), so that
        /// `Properties.load` reads it back in either encoding. Strings are
        /// written as they are, other values as compact JSON text.
        case properties
        /// An XML property list whose root is a dictionary. A property list
        /// has no null: null values, at any depth, are left out and listed
        /// in ``PreferencesExport/omitted``. A string with a control
        /// character other than tab, newline or carriage return cannot be
        /// exported (XML 1.0 cannot carry it).
        case plist
    }

    /// The format of ``text``.
    public let format: Format
    /// The exported text, ending with a newline.
    public let text: String
    /// The values left out, by path: a key (`"timeout"`), a member of an
    /// object value (`"limits.max"`) or an array element (`"servers[2]"`).
    /// Only a property list leaves values out (its nulls).
    public let omitted: [String]

    /// Writes `values` in `format`.
    ///
    /// - Throws: ``PreferencesError/invalidValue(key:reason:)`` naming the
    ///   key (or path) of a string a property list cannot carry; only
    ///   ``Format/plist`` throws.
    public init(_ values: [String: PreferenceValue], as format: Format) throws {
        self.format = format
        switch format {
        case .json:
            text = JSONText.encode(.object(values), pretty: true) + "\n"
            omitted = []
        case .properties:
            text = PropertiesWriter.text(values)
            omitted = []
        case .plist:
            (text, omitted) = try PropertyListWriter.text(values)
        }
    }

    /// One sentence for each value left out, as `prefs export` prints them
    /// after `prefs: warning: `:
    /// `'timeout' is null, which a property list cannot hold; left out`.
    public var warnings: [String] {
        omitted.map { "'\($0)' is null, which a property list cannot hold; left out" }
    }
}

extension PreferencesSnapshot {
    /// The stored values as text in `format` (defaults are not included);
    /// see ``PreferencesExport/Format``.
    ///
    /// ```swift
    /// print(try store.snapshot.exported(as: .properties), terminator: "")
    /// // dark_mode=true
    /// // language=fr
    /// ```
    ///
    /// A property list leaves null values out without saying so; use
    /// ``export(as:)`` to learn which.
    ///
    /// - Throws: ``PreferencesError/invalidValue(key:reason:)`` for a string
    ///   a property list cannot carry (only ``PreferencesExport/Format/plist``).
    public func exported(as format: PreferencesExport.Format) throws -> String {
        try export(as: format).text
    }

    /// The stored values in `format`, with the values the format left out
    /// (see ``PreferencesExport``).
    ///
    /// ```swift
    /// let plist = try store.snapshot.export(as: .plist)
    /// for warning in plist.warnings { print("warning:", warning) }
    /// try plist.text.write(to: url, atomically: true, encoding: .utf8)
    /// ```
    public func export(as format: PreferencesExport.Format) throws -> PreferencesExport {
        try PreferencesExport(values, as: format)
    }
}
