/// `prefs path`: prints where the store is, without opening it or reading
/// the key manifest, so it works for a store that does not exist yet.
struct PathCommand: PrefsCommand {
    static let name = "path"
    static let readsManifest = false
    static let help = CommandHelp(
        summary: "Print the store file's path.",
        discussion: """
            --file wins; else the suite (--suite, default 'default') is \
            $PREFS_HOME/NAME.json, else $XDG_CONFIG_HOME/prefs/NAME.json, else \
            ~/.config/prefs/NAME.json (macOS: ~/Library/Application Support/prefs/). \
            Suite names are letters, digits, '.', '_' and '-', not starting with '.'.
            """,
        examples: [("--suite com.example.app path", "prints where that suite lives")])

    init(_ parsed: ParsedOptions<Self>) {}

    func run(_ context: CommandContext) async throws {
        context.output.print(context.target.path)
    }
}
