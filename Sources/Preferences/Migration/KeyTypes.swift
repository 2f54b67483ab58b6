/// The declared types of keys, by key name: how a ``LegacyImport`` turns
/// the strings of a legacy source into typed values.
///
/// Write it as a list of your typed keys, or as a dictionary from key name
/// to ``ValueConversion``. Names are the keys' names in the store, that
/// is after ``LegacyImport``'s renames.
///
/// ```swift
/// let fromKeys: KeyTypes = [.darkMode, .mapZoom]          // Bool, Double
/// let byName: KeyTypes = ["map_zoom": .double, "retries": .int]
/// let both = fromKeys.merging(["retries": .int])
/// ```
///
/// Keys without a declared type are stored as the source holds them.
public struct KeyTypes: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// The type of each key with a declared type.
    public var types: [String: ValueConversion]

    /// Types from a dictionary of key names.
    public init(_ types: [String: ValueConversion] = [:]) {
        self.types = types
    }

    /// Types taken from typed keys (`PreferenceKey<Bool>` declares a Bool).
    public init(_ keys: [PreferenceKeys]) {
        types = [:]
        for key in keys {
            if let typed = key as? any ValueTypedKey { types[typed.name] = typed.valueType }
        }
    }

    /// `[.darkMode, .mapZoom]`: the types of typed keys.
    public init(arrayLiteral keys: PreferenceKeys...) {
        self.init(keys)
    }

    /// `["map_zoom": .double]`: types by key name.
    public init(dictionaryLiteral elements: (String, ValueConversion)...) {
        self.init(Dictionary(elements) { _, last in last })
    }

    /// These types plus `other`'s (which win for a key named in both).
    public func merging(_ other: KeyTypes) -> KeyTypes {
        KeyTypes(types.merging(other.types) { _, theirs in theirs })
    }

    /// The type declared for `key`, if any.
    public subscript(key: String) -> ValueConversion? { types[key] }
}

/// A typed key seen without its generic parameter.
protocol ValueTypedKey {
    var name: String { get }
    var valueType: ValueConversion { get }
}

extension PreferenceKey: ValueTypedKey {
    var valueType: ValueConversion { ValueConversion(of: self) }
}
