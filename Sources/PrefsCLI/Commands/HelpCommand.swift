/// `prefs help [COMMAND]`: the text of `prefs --help`, or of `prefs
/// COMMAND --help`.
struct HelpCommand: PrefsCommand {
    typealias Context = ToolContext

    static let name = "help"
    static let arguments = CommandArguments("[COMMAND]", 0...1, completing: [.commands])
    static let help = CommandHelp(
        summary: "Show help for prefs or for one command.",
        discussion: """
            Prints the same text as 'prefs --help', or with a COMMAND, as \
            'prefs COMMAND --help'.
            """,
        examples: [
            ("help", "lists the commands and global options"),
            ("help import", "shows import's options and examples"),
        ])

    /// The command to describe; nil for the tool.
    let command: (any PrefsCommand.Type)?

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        guard let name = parsed.arguments.first else {
            command = nil
            return
        }
        guard let command = PrefsTool.commands.first(where: { $0.name == name }) else {
            throw .usage("unknown command '\(name)'", usage: Self.self)
        }
        self.command = command
    }

    func run(_ context: ToolContext) async throws {
        context.output.standardOutput(command.map(HelpText.command) ?? HelpText.tool)
    }
}
