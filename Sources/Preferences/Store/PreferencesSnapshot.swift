/// An immutable view of the store at one moment: the stored values, the
/// data version, and the defaults that apply to keys that are not stored.
///
/// ```swift
/// let snapshot = store.snapshot
/// if snapshot[.darkMode] { applyDarkTheme() }
/// print(snapshot.storedKeys)   // keys present in the file
/// ```
public struct PreferencesSnapshot: Sendable, Equatable {
    /// The stored values, by key. Defaults are not included.
    public let values: [String: PreferenceValue]
    /// The app's data version that migrations advance (SPEC §6), 0 when absent.
    public let version: Int
    /// Defaults registered with ``PreferencesStore/register(defaults:)``.
    public let registeredDefaults: [String: PreferenceValue]

    /// A snapshot of the given values, for tests and for building states by hand.
    public init(
        values: [String: PreferenceValue] = [:], version: Int = 0,
        registeredDefaults: [String: PreferenceValue] = [:]
    ) {
        self.values = values
        self.version = version
        self.registeredDefaults = registeredDefaults
    }

    /// The key's stored value, or its default when it is absent or does not
    /// decode as `Value` (see ``value(for:)`` to get the error instead).
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        guard let stored = values[key.name] else { return key.defaultValue }
        return (try? key.decode(stored)) ?? key.defaultValue
    }

    /// The key's value; throws ``PreferencesError/typeMismatch(key:expected:found:)``
    /// when the stored value does not decode as `Value`.
    public func value<Value>(for key: PreferenceKey<Value>) throws -> Value {
        guard let stored = values[key.name] else { return key.defaultValue }
        return try key.value(from: stored)
    }

    /// The stored value for a key name, else its registered default, else nil.
    public func value(forKey name: String) -> PreferenceValue? {
        values[name] ?? registeredDefaults[name]
    }

    /// Whether the key is stored in the file (a default does not count).
    public func contains(_ name: String) -> Bool { values[name] != nil }

    /// The stored keys, sorted.
    public var storedKeys: [String] { values.keys.sorted() }
}
