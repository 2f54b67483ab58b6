import Configuration
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writing through the provider, keyed as reads are.
extension PreferencesProvider {
    /// Stores `value` where a read of `key` finds it; nil removes what a
    /// read of `key` finds. Durable when it returns, recorded in the
    /// store's history with this program's name, and seen by every reader
    /// of the store, in this process or another.
    ///
    /// The stored key is the one ``value(forKey:type:)`` reads: the key's
    /// components joined with ``separator`` when that key is stored, else
    /// the field of a stored JSON object (a record's field) that the read
    /// reaches, else the joined key, stored as a key of its own. The value
    /// is stored so that a read of the same type returns it: a string,
    /// integer, double or bool as the JSON scalar; bytes as a `Data`
    /// value's base64 text; arrays as JSON arrays.
    ///
    /// A key that is secret — declared so by a manifest, listed by the
    /// store, given to the provider, or written with `isSecret: true` —
    /// stays secret: the history records that it changed, never its value,
    /// and no error quotes it. A key that any published manifest declares
    /// is checked against each declaration (its type, range and allowed
    /// values) and refused, naming the key, when one does not accept the
    /// value; nothing is written then.
    ///
    /// ```swift
    /// let provider = PreferencesProvider(store: store)
    /// try await provider.setValue(8443, forKey: "http.port")
    /// try await provider.setValue(ConfigValue("s3cret", isSecret: true), forKey: "db.password")
    /// try await provider.setValue(nil, forKey: "http.port")   // removed
    /// ```
    ///
    /// - Throws: ``Preferences/PreferencesError/invalidValue(key:reason:)``
    ///   naming the stored key when a declaration refuses the value, or the
    ///   store's error when the write fails.
    public func setValue(_ value: ConfigValue?, forKey key: AbsoluteConfigKey) async throws {
        let start = ContinuousClock.now
        do {
            try await write(value, forKey: key)
            metrics.writes.increment()
        } catch {
            metrics.writeErrors.increment()
            metrics.writeDuration.record(duration: ContinuousClock.now - start)
            metrics.sample(store.activity)
            throw error
        }
        metrics.writeDuration.record(duration: ContinuousClock.now - start)
        metrics.sample(store.activity)
    }

    private func write(_ value: ConfigValue?, forKey key: AbsoluteConfigKey) async throws {
        let stored = value.map { PreferenceValue(storing: $0.content) }
        // The declarations as published now, read off the caller's thread.
        let declarations = await follower.refresh().declarations
        let lookup = self.lookup
        // Every name the write can reach: the joined key, and each leading
        // part that could name a record. Those secret stay secret in this
        // write's history entry.
        let components = key.components
        let candidates = (1...components.count).map { lookup.join(components[..<$0]) }
        let joined = lookup.join(components)
        var secretNames = Set(candidates.filter(isSecret))
        if value?.isSecret == true {
            let target = WriteTarget.resolve(key, lookup: lookup, read: store.storedValue(forKey:))
            secretNames.insert(target.name)
            secretNames.insert(joined)
        }
        if !secretNames.isEmpty { store.treatAsSecret(secretNames) }
        let secret = secretNames
        let manifests = declarations.manifests
        try await store.edit { prefs in
            let target = WriteTarget.resolve(key, lookup: lookup, read: { prefs[raw: $0] })
            let new = try target.storing(stored, in: prefs[raw: target.name])
            if let new,
                let refusal = PreferencesManifest.refusal(
                    of: new, forKey: target.name, by: manifests)
            {
                // "key 'K' must be …": the error names the key itself.
                var message = refusal.message
                let named = "key '\(target.name)' "
                if message.hasPrefix(named) { message.removeFirst(named.count) }
                if secret.contains(target.name) || secret.contains(joined) {
                    let redaction = SecretRedaction(
                        secrets: [], read: { _ in nil }, extra: [new] + (stored.map { [$0] } ?? []))
                    message = redaction.scrub(message)
                }
                throw PreferencesError.invalidValue(key: target.name, reason: message)
            }
            prefs[raw: target.name] = new
        }
    }
}

/// Where a write of a configuration key goes: the stored key a read of it
/// reaches, and, for a field of a stored object, the path to the field.
struct WriteTarget: Equatable {
    /// The stored key written.
    var name: String
    /// The fields from the stored object to the value; empty when the
    /// stored key holds the value itself.
    var fields: [String]

    /// The target of a write of `key`, as ``KeyLookup/find(_:read:isSecret:)``
    /// reads it: the joined key when stored, else the field of a stored
    /// object that a read reaches, else the joined key.
    static func resolve(
        _ key: AbsoluteConfigKey, lookup: KeyLookup, read: (String) -> PreferenceValue?
    ) -> WriteTarget {
        let components = key.components
        let joined = lookup.join(components)
        if read(joined) != nil || components.count < 2 {
            return WriteTarget(name: joined, fields: [])
        }
        for split in stride(from: components.count - 1, through: 1, by: -1) {
            let prefix = lookup.join(components[..<split])
            guard case .object(var fields)? = read(prefix) else { continue }
            // A read follows the fields only while each exists.
            for index in split..<(components.count - 1) {
                guard case .object(let inner)? = fields[components[index]] else {
                    return WriteTarget(name: joined, fields: [])
                }
                fields = inner
            }
            guard fields[components[components.count - 1]] != nil else {
                return WriteTarget(name: joined, fields: [])
            }
            return WriteTarget(name: prefix, fields: Array(components[split...]))
        }
        return WriteTarget(name: joined, fields: [])
    }

    /// What the stored key holds once `value` is written at the target
    /// (nil: removed), given what it holds now.
    func storing(_ value: PreferenceValue?, in current: PreferenceValue?) throws -> PreferenceValue?
    {
        guard !fields.isEmpty else { return value }
        guard let current else { return value }
        return Self.replacing(fields[...], in: current, with: value)
    }

    private static func replacing(
        _ path: ArraySlice<String>, in current: PreferenceValue, with value: PreferenceValue?
    ) -> PreferenceValue {
        guard let field = path.first, case .object(var object) = current else { return current }
        if path.count == 1 {
            object[field] = value
        } else if let inner = object[field] {
            object[field] = replacing(path.dropFirst(), in: inner, with: value)
        }
        return .object(object)
    }
}

extension PreferenceValue {
    /// `content` as the store keeps it, so that a read of its type returns
    /// it: bytes as base64 text, non-finite doubles as the file format's
    /// spellings.
    init(storing content: ConfigContent) {
        switch content {
        case .string(let text): self = .string(text)
        case .int(let number): self = .int(Int64(number))
        case .double(let number): self = Self.storing(number)
        case .bool(let flag): self = .bool(flag)
        case .bytes(let bytes): self = .string(Data(bytes).base64EncodedString())
        case .stringArray(let items): self = .array(items.map { .string($0) })
        case .intArray(let items): self = .array(items.map { .int(Int64($0)) })
        case .doubleArray(let items): self = .array(items.map(Self.storing))
        case .boolArray(let items): self = .array(items.map { .bool($0) })
        case .byteChunkArray(let items):
            self = .array(items.map { .string(Data($0).base64EncodedString()) })
        }
    }

    private static func storing(_ number: Double) -> PreferenceValue {
        if number.isNaN { return .string("NaN") }
        if number.isInfinite { return .string(number < 0 ? "-Infinity" : "Infinity") }
        return .double(number)
    }
}
