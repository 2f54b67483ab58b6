import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `prefs list [--json] [--long] [--defaults]`.
///
/// Lines are `key = <json>`, sorted by key. `--long` adds when and by whom
/// each key was last changed (`  # 2026-12-01T09:30:12.345Z by alice using
/// prefs`); `--defaults` adds the manifest's declared keys that are not
/// stored, with their defaults, marked `  # default` (declared keys without
/// a default are left out: there is nothing to show). A temporary value
/// adds when it ends and what the key reads then (`; temporary until
/// 2026-12-01T10:00:00.000Z, then "info"`). Secret values are shown as
/// `<redacted>` unless `--reveal`.
struct ListCommand: PrefsCommand {
    static let name = "list"
    static let json = Flag<Self>("--json", help: "Print one JSON object instead of lines.")
    static let long = Flag<Self>(
        "--long",
        help: "Add when and by whom each key was last changed, and when a temporary value ends.")
    static let defaults = Flag<Self>(
        "--defaults", help: "Also list the manifest's keys that are not set, with defaults.")
    static let options: [any OptionDeclaration] = [json, long, defaults]
    static let help = CommandHelp(
        summary: "Print every stored key and value.",
        discussion: """
            Prints "key = <json>" lines sorted by key; with --json, one JSON \
            object of the stored values. --long ends each line with \
            '  # <UTC time> by <user> using <program>' (under sudo the user reads \
            'root (sudo from alice)'); a temporary value (set with 'prefs set \
            --for') adds '; temporary until <UTC time>, then <value>' ((unset) when \
            the key will not be set). --defaults adds the keys the key manifest \
            declares that are not stored, with their defaults, each marked \
            '  # default'. With --json and either flag, each key maps to an object: \
            {"value":…,"modified":{"at":…,"by":…,"program":…}} or {"value":…,"default":true}, \
            with --long and a temporary value also "temporary":{"until":…,"then":…} \
            ("then" absent when the key will not be set). The values of secret \
            keys are shown as <redacted> unless --reveal is given.
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
                context.output.print(ExportCommand.json(context.secrets.shown(snapshot.values)))
                return
            }
            var entries: [String: PreferenceValue] = [:]
            for key in keys {
                entries[key] = Self.entry(
                    key, in: snapshot, defaults: defaults, long: long, secrets: context.secrets)
            }
            context.output.print(PreferenceValue.object(entries).jsonText)
            return
        }
        let lines = keys.map { key in
            let secrets = context.secrets
            if let value = snapshot.values[key] {
                let suffix = long ? "  # " + Self.note(key, in: snapshot, secrets: secrets) : ""
                return "\(key) = \(secrets.text(value, forKey: key))\(suffix)\n"
            }
            return "\(key) = \(secrets.text(defaults[key]!, forKey: key))  # default\n"
        }
        context.output.standardOutput(lines.joined())
    }

    /// `{"value":…,"modified":{…}}` for a stored key, `{"value":…,"default":true}` for a default.
    /// With `long`, a temporary value adds `"temporary":{"until":…,"then":…}`.
    static func entry(
        _ key: String, in snapshot: PreferencesSnapshot, defaults: [String: PreferenceValue],
        long: Bool, secrets: SecretRedaction
    ) -> PreferenceValue {
        guard let value = snapshot.values[key] else {
            return [
                "value": secrets.shown(defaults[key] ?? .null, forKey: key), "default": true,
            ]
        }
        var fields: [String: PreferenceValue] = ["value": secrets.shown(value, forKey: key)]
        guard long else { return .object(fields) }
        fields["modified"] = snapshot.modification(forKey: key)?.jsonValue
        if let end = snapshot.temporaryValueEnd(forKey: key) {
            var temporary: [String: PreferenceValue] = ["until": .string(Self.timestamp(end))]
            if let then = snapshot.valueAfterTemporary(forKey: key) {
                temporary["then"] = secrets.shown(then, forKey: key)
            }
            fields["temporary"] = .object(temporary)
        }
        return .object(fields)
    }

    /// What `--long` adds after `  # ` for a stored key: ``changeText(_:)``,
    /// and for a temporary value `; temporary until <UTC time>, then <value>`.
    static func note(
        _ key: String, in snapshot: PreferencesSnapshot, secrets: SecretRedaction
    ) -> String {
        let change = changeText(snapshot.modification(forKey: key))
        guard let end = snapshot.temporaryValueEnd(forKey: key) else { return change }
        let then = secrets.text(snapshot.valueAfterTemporary(forKey: key), forKey: key)
        return "\(change); temporary until \(timestamp(end)), then \(then)"
    }

    /// `2026-12-01T09:30:12.345Z`: UTC, with milliseconds, as history times are written.
    static func timestamp(_ date: Date) -> String {
        PreferenceModification(date: date, user: "", program: "").timestamp
    }

    /// `2026-12-01T09:30:12.345Z by alice using prefs`, or a note that
    /// nothing was recorded (a key written before changes were recorded, or
    /// by a program that does not record them).
    static func changeText(_ modification: PreferenceModification?) -> String {
        modification?.description ?? "change not recorded"
    }
}
