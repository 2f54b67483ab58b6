/// The values an ``PreferencesStore/edit(_:)`` transform changes.
///
/// Reads see the edit's own changes; nothing is visible to anyone else until
/// the whole transform returns and the new state is on disk.
///
/// ```swift
/// try await store.edit { prefs in
///     prefs[.launchCount] += 1
///     prefs[.lastLaunch] = Date()
///     prefs.remove(.pendingMigration)
/// }
/// ```
public struct MutablePreferences: Sendable {
    /// The stored values, by key.
    public internal(set) var values: [String: PreferenceValue]
    /// The app's data version (SPEC §6).
    public var version: Int
    let registeredDefaults: [String: PreferenceValue]
    let limits: PreferencesLimits
    /// The first error a setter hit (setters cannot throw); the edit fails with it.
    var failure: PreferencesError?

    init(snapshot: PreferencesSnapshot, limits: PreferencesLimits) {
        self.values = snapshot.values
        self.version = snapshot.version
        self.registeredDefaults = snapshot.registeredDefaults
        self.limits = limits
    }

    var snapshot: PreferencesSnapshot {
        PreferencesSnapshot(values: values, version: version, registeredDefaults: registeredDefaults)
    }

    /// The key's value (its default when absent or of the wrong type); setting
    /// stores it, and setting `nil` in an optional key removes it.
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        get { snapshot[key] }
        set {
            do {
                if let encoded = try key.encode(newValue) {
                    self[raw: key.name] = encoded
                } else {
                    self[raw: key.name] = nil
                }
            } catch let error as PreferencesError {
                failure = failure ?? error
            } catch {
                failure =
                    failure
                    ?? .invalidValue(key: key.name, reason: ValueCoding.describe(error))
            }
        }
    }

    /// The stored value of a key name; setting nil removes the key.
    public subscript(raw name: String) -> PreferenceValue? {
        get { values[name] }
        set {
            if let problem = limits.problem(withKey: name) {
                failure = failure ?? .invalidKey(key: name, reason: problem)
                return
            }
            values[name] = newValue
        }
    }

    /// Removes the key, so its default applies again.
    public mutating func remove<Value>(_ key: PreferenceKey<Value>) {
        values[key.name] = nil
    }

    /// Removes a key by name.
    public mutating func remove(_ name: String) {
        values[name] = nil
    }

    /// Removes every stored key (the data version is kept).
    public mutating func removeAll() {
        values.removeAll()
    }

    /// Sets a value by key name, converting from any `Codable` value.
    public mutating func set<Value: Encodable>(_ value: Value, forKey name: String) throws {
        let encoded = try ValueCoding.encode(value)
        if let problem = limits.problem(withKey: name) {
            throw PreferencesError.invalidKey(key: name, reason: problem)
        }
        values[name] = encoded == .null ? nil : encoded
    }
}
