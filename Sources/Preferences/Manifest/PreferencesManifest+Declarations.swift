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

    /// A manifest declaring each top-level field of a record
    /// (R1, <doc:Records>), with the values of `Record()` as defaults.
    ///
    /// A field whose coding key is its property's name takes the type its
    /// Swift type declares (a `Double` field is a `double` even when its
    /// default is 14, a `Date` field a `date`); other fields, and enums and
    /// structs, take the JSON kind of their encoded default. Optional fields
    /// whose default is `nil` are not declared, since nothing in the
    /// encoding shows them. Merge with ``init(keys:)`` or edit ``entries``
    /// to say more.
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
        var declaredTypes: [String: PreferenceValueType] = [:]
        for child in Mirror(reflecting: Record()).children {
            guard let label = child.label else { continue }
            declaredTypes[label] = PreferenceValueType(swiftType: type(of: child.value))
        }
        var entries: [String: Entry] = [:]
        for (name, value) in fields where value != .null {
            let type = declaredTypes[name] ?? PreferenceValueType(kindOf: value)
            entries[name] = Entry(type: type, defaultValue: value)
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
            type: type, defaultValue: encoded, help: help, allowedValues: cases, secret: secret)
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
