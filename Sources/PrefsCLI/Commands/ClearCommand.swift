import Preferences

/// `prefs clear`: removes every stored key.
struct ClearCommand: PrefsCommand {
    static let name = "clear"
    static let help = CommandHelp(
        summary: "Remove every stored key.",
        discussion: "Every default applies again. The app's data version is kept.",
        examples: [("--suite com.example.app clear", "empties that suite")])

    init(_ parsed: ParsedOptions<Self>) {}

    func run(_ context: CommandContext) async throws {
        try await context.openStore().clear()
    }
}
