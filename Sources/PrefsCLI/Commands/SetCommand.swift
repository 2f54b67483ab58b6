import Preferences

/// `prefs set KEY VALUE [--type TYPE]`.
///
/// The value's type comes from, in order (7.2 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md): `--type`; the
/// manifest's declaration of KEY; the type of the value stored now (a
/// string stays a string, a number stays the same kind of number); and for
/// a new key, inference from the text. A value that does not fit the
/// stored type exits with status 3 and says to pass `--type` to change the
/// type on purpose.
enum SetCommand {
    static func run(_ context: CommandContext) async throws {
        let key = context.argument(0)
        let text = context.argument(1)
        let explicit: PreferenceValue?
        if let typeName = context.invocation.value("--type") {
            guard let type = PreferenceValueType(rawValue: typeName) else {
                let names = PreferenceValueType.allCases.map(\.rawValue).joined(separator: ", ")
                throw CommandFailure.usage(
                    "unknown type '\(typeName)' (use \(names))", usage: context.command)
            }
            let value = try type.parse(text, forKey: key)
            try context.validate(value, forKey: key)
            explicit = value
        } else if let manifest = context.manifest, manifest[key] != nil {
            explicit = try manifest.parse(text, forKey: key)
        } else {
            explicit = nil
        }
        let store = try await context.openStore()
        try await store.edit { preferences in
            // The stored type is read under the lock, from the state the write replaces.
            preferences[raw: key] =
                try explicit ?? value(text, key: key, stored: preferences[raw: key])
        }
    }

    /// `text` as the type of `stored`, or inferred when nothing is stored.
    static func value(_ text: String, key: String, stored: PreferenceValue?) throws
        -> PreferenceValue
    {
        guard let stored, stored != .null else {
            return try PreferenceValueType.inferred(from: text).parse(text, forKey: key)
        }
        let type = PreferenceValueType(kindOf: stored)
        do {
            return try type.parse(text, forKey: key)
        } catch let error as PreferencesError {
            guard case .invalidValue(_, let reason) = error else { throw error }
            throw CommandFailure(
                .invalidValue,
                "invalid value for key '\(key)': \(reason); it holds \(stored.typeDescription) "
                    + "now (pass --type to store another type)")
        }
    }
}
