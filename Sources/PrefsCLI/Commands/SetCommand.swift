import Preferences

/// `prefs set KEY VALUE [--type TYPE]`.
enum SetCommand {
    static func run(_ context: CommandContext) async throws {
        let key = context.argument(0)
        let text = context.argument(1)
        let value: CommandLineValue
        if let typeName = context.invocation.value("--type") {
            guard let type = ValueType(rawValue: typeName) else {
                throw CommandFailure.usage(
                    "unknown type '\(typeName)' (use \(ValueType.names))", usage: context.command)
            }
            value = try CommandLineValue.parse(text, as: type, key: key)
            try context.validate(value.storedForm, forKey: key)
        } else if let manifest = context.manifest, manifest[key] != nil {
            value = .value(try manifest.parse(text, forKey: key))
        } else {
            value = .value(CommandLineValue.infer(text))
        }
        let store = try await context.openStore()
        try await store.edit { preferences in
            try value.store(in: &preferences, key: key)
        }
    }
}
