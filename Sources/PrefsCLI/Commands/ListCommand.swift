import Preferences

/// `prefs list [--json] [--long] [--defaults]`.
///
/// Lines are `key = <json>`, sorted by key. `--long` adds when and by whom
/// each key was last changed (`  # 2026-12-01T09:30:12.345Z by alice using
/// prefs`); `--defaults` adds the manifest's declared keys that are not
/// stored, with their defaults, marked `  # default` (declared keys without
/// a default are left out: there is nothing to show).
struct ListCommand: PrefsCommand {
    static let name = "list"
    static let json = Flag<Self>("--json", help: "Print one JSON object instead of lines.")
    static let long = Flag<Self>("--long", help: "Add when and by whom each key was last changed.")
    static let defaults = Flag<Self>(
        "--defaults", help: "Also list the manifest's keys that are not set, with defaults.")
    static let options: [any OptionDeclaration] = [json, long, defaults]
    static let help = CommandHelp(
        summary: "Print every stored key and value.",
        discussion: """
            Prints "key = <json>" lines sorted by key; with --json, one JSON \
            object of the stored values. --long ends each line with \
            '  # <UTC time> by <user> using <program>' (under sudo the user reads \
            'root (sudo from alice)'). --defaults adds the keys the key manifest \
            declares that are not stored, with their defaults, each marked \
            '  # default'. With --json and either flag, each key maps to an object: \
            {"value":…,"modified":{"at":…,"by":…,"program":…}} or {"value":…,"default":true}.
            """,
        examples: [
            ("list", "prints: dark_mode = true"),
            (
                "list --long",
                "prints: dark_mode = true  # 2026-12-01T09:30:12.345Z by alice using prefs"
            ),
            ("list --defaults", "prints: language = \"en\"  # default"),
            ("list --json", "prints a JSON object"),
        ])

    let json: Bool
    let long: Bool
    let withDefaults: Bool

    init(_ parsed: ParsedOptions<Self>) {
        json = parsed[Self.json]
        long = parsed[Self.long]
        withDefaults = parsed[Self.defaults]
    }

    func run(_ context: CommandContext) async throws {
        let snapshot = try await context.openStore().snapshot
        var defaults: [String: PreferenceValue] = [:]
        if withDefaults {
            for (key, entry) in context.manifest?.entries ?? [:] where !snapshot.contains(key) {
                defaults[key] = entry.defaultValue
            }
        }
        let keys = (snapshot.storedKeys + defaults.keys).sortedByBytes()
        if json {
            guard long || withDefaults else {
                context.output.print(ExportCommand.json(snapshot.values))
                return
            }
            var entries: [String: PreferenceValue] = [:]
            for key in keys {
                entries[key] = Self.entry(key, in: snapshot, defaults: defaults, long: long)
            }
            context.output.print(PreferenceValue.object(entries).jsonText)
            return
        }
        let lines = keys.map { key in
            if let value = snapshot.values[key] {
                let suffix =
                    long ? "  # " + Self.changeText(snapshot.modification(forKey: key)) : ""
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
