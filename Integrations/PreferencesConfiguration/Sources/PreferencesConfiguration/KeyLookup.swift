import Configuration
import Preferences

/// How a configuration key finds its value among a store's keys: its
/// components joined with the separator name the stored key; when no such
/// key is stored, the longest leading part that names a stored JSON object
/// is followed by that object's fields.
struct KeyLookup: Sendable {
    let separator: String

    /// A value found for a key, and whether it is secret.
    struct Found: Equatable, Sendable {
        var value: PreferenceValue
        var isSecret: Bool
    }

    /// The stored key's name for `key`, and what is stored for it: read
    /// with `read`, secret when `isSecret` says so of the stored key (or of
    /// the object's key, for a field). A JSON null counts as nothing stored.
    func find(
        _ key: AbsoluteConfigKey, read: (String) -> PreferenceValue?,
        isSecret: (String) -> Bool
    ) -> (encodedKey: String, found: Found?) {
        let components = key.components
        let name = join(components)
        if let value = read(name) {
            return (name, value == .null ? nil : Found(value: value, isSecret: isSecret(name)))
        }
        guard components.count > 1 else { return (name, nil) }
        for split in stride(from: components.count - 1, through: 1, by: -1) {
            let prefix = join(components[..<split])
            guard case .object(var fields)? = read(prefix) else { continue }
            var index = split
            while true {
                guard let field = fields[components[index]] else { return (name, nil) }
                index += 1
                if index == components.count {
                    if field == .null { return (name, nil) }
                    return (name, Found(value: field, isSecret: isSecret(prefix) || isSecret(name)))
                }
                guard case .object(let inner) = field else { return (name, nil) }
                fields = inner
            }
        }
        return (name, nil)
    }

    /// What swift-configuration's reads return for `key` as `type`.
    ///
    /// - Throws: ``PreferencesProviderError`` when the stored value is not of `type`.
    func result(
        _ key: AbsoluteConfigKey, type: ConfigType, read: (String) -> PreferenceValue?,
        isSecret: (String) -> Bool
    ) throws -> LookupResult {
        let (encodedKey, found) = find(key, read: read, isSecret: isSecret)
        guard let found else { return LookupResult(encodedKey: encodedKey, value: nil) }
        let content = try ConfigContent.converting(found.value, to: type, key: key)
        return LookupResult(
            encodedKey: encodedKey, value: ConfigValue(content, isSecret: found.isSecret))
    }

    /// `components` joined with the separator, into one allocation (every
    /// read calls this).
    func join(_ components: some Collection<String>) -> String {
        if components.count == 1 { return components.first! }
        var length = separator.utf8.count * max(0, components.count - 1)
        for component in components { length += component.utf8.count }
        var name = ""
        name.reserveCapacity(length)
        var first = true
        for component in components {
            if !first { name += separator }
            first = false
            name += component
        }
        return name
    }
}
