extension PreferencesManifest {
    /// A manifest declaring `keys`: each key's type comes from its `Value`
    /// type, its default from its `defaultValue` (none when that is `nil`),
    /// its description from its `help`, and for `CaseIterable` enums the
    /// allowed values from `allCases`.
    ///
    /// ```swift
    /// let manifest = try PreferencesManifest(keys: [
    ///     PreferenceKeys.darkMode, PreferenceKeys.language, PreferenceKeys.mapZoom,
    /// ])
    /// print(manifest.jsonText)
    /// ```
    ///
    /// Types without a manifest type of their own (enums, structs) take the
    /// JSON kind of their encoded default: a `String`-backed enum is a
    /// `string`, a struct is `json`.
    ///
    /// - Throws: an encoding error when a default cannot be encoded.
    public init(keys: [PreferenceKeys]) throws {
        var entries: [String: Entry] = [:]
        for key in keys {
            guard let declaration = key as? any ManifestDeclaring else { continue }
            entries[declaration.name] = try declaration.manifestEntry()
        }
        self.init(entries: entries)
    }

    /// A manifest declaring each top-level field of a record (SPEC R1), with
    /// the values of `Record()` as defaults.
    ///
    /// Types are the JSON kinds of the encoded defaults (a `Date` field is a
    /// `string`), and optional fields whose default is `nil` are not
    /// declared, since nothing in the encoding shows them. Merge with
    /// ``init(keys:)`` or edit ``entries`` to say more.
    ///
    /// ```swift
    /// let manifest = try PreferencesManifest(record: AppSettings.self)
    /// ```
    public init<Record: PreferencesRecord>(record: Record.Type) throws {
        guard case .object(let fields) = try ValueCoding.encode(Record()) else {
            throw PreferencesError.invalidValue(
                key: "\(Record.self)",
                reason: "a record must encode as a keyed container (an object)")
        }
        var entries: [String: Entry] = [:]
        for (name, value) in fields where value != .null {
            entries[name] = Entry(type: PreferenceValueType(kindOf: value), defaultValue: value)
        }
        self.init(entries: entries)
    }
}

/// A key that can describe itself in a manifest.
protocol ManifestDeclaring {
    var name: String { get }
    func manifestEntry() throws -> PreferencesManifest.Entry
}

extension PreferenceKey: ManifestDeclaring {
    func manifestEntry() throws -> PreferencesManifest.Entry {
        let encoded = try encode(defaultValue)
        let cases = Self.caseValues()
        let type =
            PreferenceValueType(swiftType: Value.self)
            ?? PreferenceValueType(kindOf: encoded ?? cases?.first)
        return PreferencesManifest.Entry(
            type: type, defaultValue: encoded, help: help, allowedValues: cases)
    }

    /// The encoded `allCases` when `Value` (or the type it wraps) is `CaseIterable`.
    private static func caseValues() -> [PreferenceValue]? {
        var type: Any.Type = Value.self
        while let optional = type as? any OptionalDeclaration.Type { type = optional.wrappedType }
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        return encodedCases(iterable)
    }

    private static func encodedCases<Cases: CaseIterable>(_ type: Cases.Type) -> [PreferenceValue]?
    {
        var values: [PreferenceValue] = []
        for item in Cases.allCases {
            guard let encodable = item as? any Encodable,
                let value = try? ValueCoding.encode(encodable)
            else { return nil }
            values.append(value)
        }
        return values.isEmpty ? nil : values
    }
}
