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
            With --system the suite's system-wide file, which a service and its \
            operators share: $PREFS_SYSTEM_HOME/NAME/NAME.json, else \
            /var/lib/prefs/NAME/NAME.json (macOS: /Library/Preferences/prefs/NAME/); \
            its directory belongs to the service's user and is never created by prefs. \
            Suite names are letters, digits, '.', '_' and '-', not starting with '.'.
            """,
        examples: [
            ("--suite com.example.app path", "prints where that suite lives"),
            (
                "--system --suite com.example.api path",
                "prints where the service's shared suite lives"
            ),
        ])

    init(_ parsed: ParsedOptions<Self>) {}

    func run(_ context: CommandContext) async throws {
        context.output.print(context.target.path)
    }
}
