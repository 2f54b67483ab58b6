import Preferences

/// `prefs list [--json] [--long] [--defaults]`.
///
/// Lines are `key = <json>`, sorted by key. `--long` adds when and by whom
/// each key was last changed (`  # 2026-12-01T09:30:12.345Z by alice using
/// prefs`); `--defaults` adds the manifest's declared keys that are not
/// stored, with their defaults, marked `  # default` (declared keys without
/// a default are left out: there is nothing to show).
enum ListCommand {
    static func run(_ context: CommandContext) async throws {
        let snapshot = try await context.openStore().snapshot
        let long = context.invocation.has("--long")
        var defaults: [String: PreferenceValue] = [:]
        if context.invocation.has("--defaults") {
            for (key, entry) in context.manifest?.entries ?? [:] where !snapshot.contains(key) {
                defaults[key] = entry.defaultValue
            }
        }
        let keys = (snapshot.storedKeys + defaults.keys).sortedByBytes()
        if context.invocation.has("--json") {
            guard long || context.invocation.has("--defaults") else {
                context.output.print(ExportCommand.json(snapshot.values))
                return
            }
            var entries: [String: PreferenceValue] = [:]
            for key in keys {
                entries[key] = entry(key, in: snapshot, defaults: defaults, long: long)
            }
            context.output.print(PreferenceValue.object(entries).jsonText)
            return
        }
        let lines = keys.map { key in
            if let value = snapshot.values[key] {
                let suffix = long ? "  # " + changeText(snapshot.modification(forKey: key)) : ""
                return "\(key) = \(value.jsonText)\(suffix)\n"
            }
            return "\(key) = \(defaults[key]!.jsonText)  # default\n"
        }
        context.output.standardOutput(lines.joined())
    }

    /// `{"value":…,"modified":{…}}` for a stored key, `{"value":…,"default":true}` for a default.
    static func entry(
        _ key: String, in snapshot: PreferencesSnapshot, defaults: [String: PreferenceValue],
        long: Bool
    ) -> PreferenceValue {
        guard let value = snapshot.values[key] else {
            return ["value": defaults[key] ?? .null, "default": true]
        }
        var fields: [String: PreferenceValue] = ["value": value]
        if long { fields["modified"] = snapshot.modification(forKey: key)?.jsonValue }
        return .object(fields)
    }

    /// `2026-12-01T09:30:12.345Z by alice using prefs`, or a note that
    /// nothing was recorded (a key written before changes were recorded, or
    /// by a program that does not record them).
    static func changeText(_ modification: PreferenceModification?) -> String {
        modification?.description ?? "change not recorded"
    }
}
