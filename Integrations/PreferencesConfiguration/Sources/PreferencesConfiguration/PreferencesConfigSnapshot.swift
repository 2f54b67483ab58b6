import Configuration
import Preferences

/// The store's values at one moment, read as swift-configuration reads a
/// provider's snapshot: a value, which answers the same however the store
/// and its manifests change afterwards.
struct PreferencesConfigSnapshot: ConfigSnapshot {
    let providerName: String
    /// The stored values (temporary values in place), by key.
    let values: [String: PreferenceValue]
    /// The keys secret when the snapshot was made: those the store listed,
    /// this process declared, the manifests declared or the provider was given.
    let secrets: Set<String>
    let lookup: KeyLookup

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try lookup.result(key, type: type, read: { values[$0] }, isSecret: isSecret)
    }

    /// What is stored for `key`, as ``value(forKey:type:)`` finds it.
    func find(_ key: AbsoluteConfigKey) -> KeyLookup.Found? {
        lookup.find(key, read: { values[$0] }, isSecret: isSecret).found
    }

    private func isSecret(_ name: String) -> Bool {
        secrets.contains(name)
    }
}

extension PreferencesConfigSnapshot: CustomStringConvertible {
    var description: String { "\(providerName)[\(values.count) values]" }
}
