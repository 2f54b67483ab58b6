import Configuration
import Preferences

/// The store's values at one moment, read as swift-configuration reads a
/// provider's snapshot.
struct PreferencesConfigSnapshot: ConfigSnapshot {
    let providerName: String
    /// The stored values (temporary values in place), by key.
    let values: [String: PreferenceValue]
    /// The keys the store's file lists as secret.
    let storedSecrets: Set<String>
    /// The keys the manifests (and the provider's creator) declare secret.
    let declaredSecrets: Set<String>
    let separator: String

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let found = lookup(key)
        guard let stored = found.value else {
            return LookupResult(encodedKey: found.encodedKey, value: nil)
        }
        let content = try ConfigContent.converting(stored.value, to: type, key: key)
        return LookupResult(
            encodedKey: found.encodedKey,
            value: ConfigValue(content, isSecret: stored.isSecret))
    }

    /// A value found for a key, and whether a key on its way is secret.
    struct Found: Equatable {
        var value: PreferenceValue
        var isSecret: Bool
    }

    /// The stored key's name for `key`, and what is stored there: the
    /// stored key itself, else a field inside the JSON object stored under
    /// the longest leading part of the key that names one. A JSON null
    /// counts as nothing stored.
    func lookup(_ key: AbsoluteConfigKey) -> (encodedKey: String, value: Found?) {
        let components = key.components
        let name = components.count == 1 ? components[0] : components.joined(separator: separator)
        if let value = values[name] {
            return (name, value == .null ? nil : Found(value: value, isSecret: isSecret(name)))
        }
        guard components.count > 1 else { return (name, nil) }
        // The longest stored prefix that holds an object, then its fields.
        for split in stride(from: components.count - 1, through: 1, by: -1) {
            let prefix = components[..<split].joined(separator: separator)
            guard case .object(var fields)? = values[prefix] else { continue }
            var index = split
            while true {
                guard let field = fields[components[index]] else { return (name, nil) }
                index += 1
                if index == components.count {
                    let secret = isSecret(prefix) || isSecret(name)
                    return (name, field == .null ? nil : Found(value: field, isSecret: secret))
                }
                guard case .object(let inner) = field else { return (name, nil) }
                fields = inner
            }
        }
        return (name, nil)
    }

    private func isSecret(_ name: String) -> Bool {
        storedSecrets.contains(name) || declaredSecrets.contains(name)
    }
}

extension PreferencesConfigSnapshot: CustomStringConvertible {
    var description: String { "\(providerName)[\(values.count) values]" }
}
