import Configuration
import Preferences

/// The store's values at one moment, read as swift-configuration reads a
/// provider's snapshot.
struct PreferencesConfigSnapshot: ConfigSnapshot {
    let providerName: String
    /// The stored values (temporary values in place), by key.
    let values: [String: PreferenceValue]
    /// The keys the store lists as secret in this state.
    let storedSecrets: Set<String>
    /// Whether a key is secret by the provider's other sources (this
    /// process's declarations, the manifests, the provider's creator).
    let isDeclaredSecret: @Sendable (String) -> Bool
    let lookup: KeyLookup

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try lookup.result(key, type: type, read: { values[$0] }, isSecret: isSecret)
    }

    /// What is stored for `key`, as ``value(forKey:type:)`` finds it.
    func find(_ key: AbsoluteConfigKey) -> KeyLookup.Found? {
        lookup.find(key, read: { values[$0] }, isSecret: isSecret).found
    }

    private func isSecret(_ name: String) -> Bool {
        storedSecrets.contains(name) || isDeclaredSecret(name)
    }
}

extension PreferencesConfigSnapshot: CustomStringConvertible {
    var description: String { "\(providerName)[\(values.count) values]" }
}
