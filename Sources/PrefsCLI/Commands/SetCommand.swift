import Preferences

/// `prefs set KEY VALUE [--type TYPE]`.
enum SetCommand {
    static func run(_ context: CommandContext) async throws {
        let key = context.argument(0)
        let text = context.argument(1)
        let value: PreferenceValue
        if let typeName = context.invocation.value("--type") {
            guard let type = PreferenceValueType(rawValue: typeName) else {
                let names = PreferenceValueType.allCases.map(\.rawValue).joined(separator: ", ")
                throw CommandFailure.usage(
                    "unknown type '\(typeName)' (use \(names))", usage: context.command)
            }
            value = try type.parse(text, forKey: key)
            try context.validate(value, forKey: key)
        } else if let manifest = context.manifest, manifest[key] != nil {
            value = try manifest.parse(text, forKey: key)
        } else {
            value = try PreferenceValueType.inferred(from: text).parse(text, forKey: key)
        }
        let store = try await context.openStore()
        try await store.edit { preferences in
            preferences[raw: key] = value
        }
    }
}
