/// Reads a manifest document, naming the file and entry in every error.
struct ManifestReader {
    let source: String

    private static let documentFields: Set<String> = ["$schema", "format", "keys", "description"]
    private static let entryFields: Set<String> = [
        "type", "default", "description", "minimum", "maximum", "enum", "secret",
    ]

    func fail(_ reason: String) -> PreferencesError {
        .invalidManifest(file: source, reason: reason)
    }

    func manifest(from root: PreferenceValue) throws -> PreferencesManifest {
        guard case .object(let document) = root else {
            throw fail("a key manifest is a JSON object, not \(root.typeDescription)")
        }
        if let unknown = document.keys.sorted().first(where: { !Self.documentFields.contains($0) })
        {
            throw fail("unknown field '\(unknown)' (expected format and keys)")
        }
        if let format = document["format"], format != .int(1) {
            throw fail("unknown manifest format \(format.jsonText) (this version reads 1)")
        }
        guard case .object(let keys)? = document["keys"] else {
            throw fail("missing object 'keys'")
        }
        var entries: [String: PreferencesManifest.Entry] = [:]
        for name in keys.keys.sorted() {
            // The names a store accepts (the schema's propertyNames).
            if let problem = PreferencesLimits().problem(withKey: name) {
                throw fail("key '\(name)': \(problem)")
            }
            entries[name] = try entry(keys[name]!, name: name)
        }
        return PreferencesManifest(entries: entries)
    }

    private func entry(_ value: PreferenceValue, name: String) throws -> PreferencesManifest.Entry {
        func bad(_ reason: String) -> PreferencesError { fail("key '\(name)': \(reason)") }
        guard case .object(let fields) = value else {
            throw bad("the declaration must be an object, not \(value.typeDescription)")
        }
        if let unknown = fields.keys.sorted().first(where: { !Self.entryFields.contains($0) }) {
            throw bad("unknown field '\(unknown)'")
        }
        let names = PreferenceValueType.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .string(let typeName)? = fields["type"] else {
            throw bad("missing 'type' (\(names))")
        }
        guard let type = PreferenceValueType(rawValue: typeName) else {
            throw bad("unknown type '\(typeName)' (use \(names))")
        }
        var entry = PreferencesManifest.Entry(type: type)
        if let help = fields["description"] {
            guard case .string(let text) = help else { throw bad("'description' must be a string") }
            entry.help = text
        }
        for bound in ["minimum", "maximum"] {
            guard let field = fields[bound] else { continue }
            guard type == .int || type == .double else {
                throw bad("'\(bound)' applies only to int and double keys, not \(type.rawValue)")
            }
            guard let number = field.numberValue, number.isFinite else {
                throw bad("'\(bound)' must be a number, not \(field.jsonText)")
            }
            if bound == "minimum" { entry.minimum = number } else { entry.maximum = number }
        }
        if let minimum = entry.minimum, let maximum = entry.maximum, minimum > maximum {
            throw bad("'minimum' is greater than 'maximum'")
        }
        if let allowed = fields["enum"] {
            guard case .array(let values) = allowed, !values.isEmpty else {
                throw bad("'enum' must be a non-empty array")
            }
            for value in values where !type.accepts(value) {
                throw bad("'enum' value \(value.jsonText) is not \(type.phrase)")
            }
            entry.allowedValues = values
        }
        if let secret = fields["secret"] {
            guard case .bool(let flag) = secret else {
                throw bad("'secret' must be true or false, not \(secret.jsonText)")
            }
            entry.secret = flag
        }
        if let defaultValue = fields["default"] {
            if let reason = entry.problem(with: defaultValue) { throw bad("'default' \(reason)") }
            entry.defaultValue = defaultValue
        }
        return entry
    }
}
