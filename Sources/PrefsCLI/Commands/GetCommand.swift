import Preferences

/// `prefs get KEY [--json] [--long]`: prints a key's value, or the
/// manifest's default for a key that is not stored.
struct GetCommand: PrefsCommand {
    static let name = "get"
    static let arguments = CommandArguments("KEY", 1...1, completing: [.keys])
    static let json = Flag<Self>(
        "--json", help: "Print the value as JSON even when it is a string.")
    static let long = Flag<Self>(
        "--long",
        help: "Add when and by whom the key was last changed, and when a temporary value ends.")
    static let options: [any OptionDeclaration] = [json, long]
    static let help = CommandHelp(
        summary: "Print a key's value.",
        discussion: """
            Strings are printed as they are; other values as compact JSON. A key \
            that is not stored prints its default when the key manifest declares \
            one; otherwise the command exits with status 1. With --long the line \
            ends with '  # <UTC time> by <user> using <program>' (or '  # default'); \
            with --long --json it is one object: {"value":…,"modified":{…}}. A \
            temporary value (set with 'prefs set --for') adds '; temporary until \
            <UTC time>, then <value>' to the --long line ("temporary":{"until":…,\
            "then":…} in its object). A secret key's value is printed by 'get KEY' \
            (with or without --json), since it was asked for by name; --long \
            shows it as <redacted> unless --reveal is given.
            """,
        examples: [
            ("get language", "prints: fr"),
            ("get language --json", "prints: \"fr\""),
            ("--suite com.example.app get map_zoom", "prints: 14.5"),
            (
                "get log_level --long",
                "prints: debug  # … using prefs; temporary until 2026-12-02T04:00:00.000Z, then \"info\""
            ),
        ])

    let key: String
    let json: Bool
    let long: Bool

    init(_ parsed: ParsedOptions<Self>) {
        key = parsed.arguments[0]
        json = parsed[Self.json]
        long = parsed[Self.long]
    }

    func run(_ context: CommandContext) async throws {
        let snapshot = try await context.openStore().snapshot
        let stored = snapshot.values[key]
        guard let value = stored ?? context.manifest?[key]?.defaultValue else {
            throw CommandFailure.notSet(key)
        }
        guard long else {
            context.output.print(Self.render(value, json: json))
            return
        }
        if json {
            let defaults = stored == nil ? [key: value] : [:]
            context.output.print(
                ListCommand.entry(
                    key, in: snapshot, defaults: defaults, long: true, secrets: context.secrets
                ).jsonText)
            return
        }
        let note =
            stored == nil
            ? "default" : ListCommand.note(key, in: snapshot, secrets: context.secrets)
        let shown =
            context.secrets.hides(key) ? SecretRedaction.marker : Self.render(value, json: json)
        context.output.print("\(shown)  # \(note)")
    }

    /// Strings raw (unless `json`), everything else as compact JSON.
    static func render(_ value: PreferenceValue, json: Bool) -> String {
        if !json, case .string(let text) = value { return text }
        return value.jsonText
    }
}
