#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A key manifest (7.5, <doc:CommandLineTool>): the keys a program declares, with their
/// types, defaults, descriptions and allowed values, as a JSON file that
/// `prefs` uses to type `set`, print defaults in `get`, and report stored
/// values that do not fit in `check`.
///
/// An app generates its manifest from the keys (or the record) it declares
/// and ships the file beside its binary:
///
/// ```swift
/// let manifest = try PreferencesManifest(keys: [PreferenceKeys.darkMode, PreferenceKeys.mapZoom])
/// try manifest.write(to: URL(fileURLWithPath: "keys.json"))
///
/// let loaded = try PreferencesManifest.load(from: URL(fileURLWithPath: "keys.json"))
/// let zoom = try loaded.parse("15", forKey: "map_zoom")   // .double(15), checked against the limits
/// ```
///
/// The file looks like this (`Schemas/key-manifest.schema.json`):
///
/// ```json
/// {
///   "format" : 1,
///   "keys" : {
///     "map_zoom" : { "default" : 14, "description" : "Zoom level", "maximum" : 20, "minimum" : 1, "type" : "double" }
///   }
/// }
/// ```
public struct PreferencesManifest: Sendable, Equatable {
    /// The declared keys, by name.
    public var entries: [String: Entry]

    /// A manifest with the given entries.
    public init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    /// The entry for a key name, or nil when the key is not declared.
    public subscript(key: String) -> Entry? {
        get { entries[key] }
        set { entries[key] = newValue }
    }

    /// This manifest with `other`'s entries added; `other` wins where both declare a key.
    public func merging(_ other: PreferencesManifest) -> PreferencesManifest {
        PreferencesManifest(entries: entries.merging(other.entries) { _, new in new })
    }

    // MARK: Checking values

    /// Why a stored value does not fit its key's declaration, or nil when
    /// it fits or the key is not declared.
    ///
    /// ```swift
    /// manifest.validate(key: "map_zoom", value: 25)?.message
    /// // "key 'map_zoom' must be at most 20, not 25"
    /// ```
    public func validate(key: String, value: PreferenceValue) -> PreferencesProblem? {
        guard let reason = entries[key]?.problem(with: value) else { return nil }
        return PreferencesProblem(key: key, message: "key '\(key)' \(reason)")
    }

    /// Every stored value in `snapshot` that does not fit its declaration, sorted by key.
    public func problems(in snapshot: PreferencesSnapshot) -> [PreferencesProblem] {
        snapshot.storedKeys.compactMap { key in
            snapshot.values[key].flatMap { validate(key: key, value: $0) }
        }
    }

    /// Converts a command-line string into the value to store for `key`.
    ///
    /// A declared key's text is parsed as its declared type and checked
    /// against its limits; an undeclared key's type is inferred from the
    /// text (``PreferenceValueType/inferred(from:)``; 7.2, <doc:CommandLineTool>).
    ///
    /// - Throws: ``PreferencesError/invalidValue(key:reason:)`` naming the
    ///   key and the text.
    public func parse(_ text: String, forKey key: String) throws -> PreferenceValue {
        guard let entry = entries[key] else {
            return try PreferenceValueType.inferred(from: text).parse(text, forKey: key)
        }
        let value = try entry.type.parse(text, forKey: key)
        if let reason = entry.problem(with: value) {
            throw PreferencesError.invalidValue(
                key: key, reason: "'\(text)' \(reason.droppingFoundValue())")
        }
        return value
    }

    // MARK: Publishing beside a store

    /// The name of the manifest a store publishes beside its file
    /// (7.6, <doc:CommandLineTool>): `.json` replaced by `.keys.json`, else
    /// `.keys.json` added.
    ///
    /// ```swift
    /// PreferencesManifest.publishedName(forStoreNamed: "default.json")   // "default.keys.json"
    /// PreferencesManifest.publishedName(forStoreNamed: "settings")       // "settings.keys.json"
    /// ```
    public static func publishedName(forStoreNamed name: String) -> String {
        (name.hasSuffix(".json") ? String(name.dropLast(5)) : name) + ".keys.json"
    }

    // MARK: Reading and writing

    /// Reads a manifest file.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)`` when
    ///   the file cannot be read, and ``PreferencesError/invalidManifest(file:reason:)``
    ///   naming the file and the entry at fault when it is not a valid manifest.
    public static func load(from url: URL) throws -> PreferencesManifest {
        guard let (bytes, _) = try Platform.readFile(url.path, limit: 16 << 20) else {
            throw Platform.ioError("open", url.path, code: Platform.notFound)
        }
        return try PreferencesManifest(
            jsonText: String(decoding: bytes, as: UTF8.self), source: url.path)
    }

    /// Parses manifest JSON; `source` names it in errors.
    public init(jsonText: String, source: String = "<manifest>") throws {
        let root: PreferenceValue
        do {
            root = try PreferenceValue(jsonText: jsonText, source: source)
        } catch PreferencesError.corrupted(_, let reason) {
            throw PreferencesError.invalidManifest(
                file: source, reason: "not valid JSON: \(reason)")
        }
        self = try ManifestReader(source: source).manifest(from: root)
    }

    /// The manifest as a JSON document: pretty-printed, keys sorted, with a final newline.
    public var jsonText: String {
        var keys: [String: PreferenceValue] = [:]
        for (name, entry) in entries {
            var fields: [String: PreferenceValue] = ["type": .string(entry.type.rawValue)]
            fields["default"] = entry.defaultValue
            fields["description"] = entry.help.map(PreferenceValue.string)
            fields["minimum"] = entry.minimum.map(Entry.bound)
            fields["maximum"] = entry.maximum.map(Entry.bound)
            fields["enum"] = entry.allowedValues.map(PreferenceValue.array)
            if entry.secret { fields["secret"] = true }
            keys[name] = .object(fields)
        }
        let document: PreferenceValue = ["format": 1, "keys": .object(keys)]
        return JSONText.encode(document, pretty: true) + "\n"
    }

    /// Writes ``jsonText`` to `url`, replacing the file atomically: a new
    /// file (mode 0644), fsynced, renamed over the old one.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)``.
    public func write(to url: URL) throws {
        _ = try Platform.replaceFile(url.path, with: Array(jsonText.utf8), mode: 0o644)
    }
}

extension String {
    /// "must be at most 20, not 25" → "must be at most 20", for messages that name the value first.
    fileprivate func droppingFoundValue() -> String {
        guard let range = ranges(of: ", not ").last else { return self }
        return String(self[..<range.lowerBound])
    }
}
