/// `prefs help [COMMAND]`: the text of `prefs --help`, or of `prefs
/// COMMAND --help`; `prefs help --man`, the manual page (``ManualPage``).
struct HelpCommand: PrefsCommand {
    typealias Context = ToolContext

    static let name = "help"
    static let arguments = CommandArguments("[COMMAND]", 0...1, completing: [.commands])
    static let man = Flag<Self>(
        "--man", help: "Print the manual page, prefs(1), in man(7) markup.", hidden: true)
    static let options: [any OptionDeclaration] = [man]
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
    /// Print the manual page instead.
    let manualPage: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        manualPage = parsed[Self.man]
        command = try Self.command(named: parsed.arguments.first, manualPage: manualPage)
    }

    /// The command `name` names; nil for none.
    private static func command(named name: String?, manualPage: Bool) throws(CommandFailure)
        -> (any PrefsCommand.Type)?
    {
        guard let name else { return nil }
        if manualPage {
            throw .usage(
                "unexpected argument '\(name)' (--man prints the whole page)", usage: Self.self)
        }
        guard let command = PrefsTool.commands.first(where: { $0.name == name }) else {
            throw CommandLineParser.unknown(
                "command", name, among: PrefsTool.commands.map { $0.name }, usage: Self.self)
        }
        return command
    }

    func run(_ context: ToolContext) async throws {
        if manualPage {
            context.output.standardOutput(ManualPage.text)
            return
        }
        context.output.standardOutput(command.map(HelpText.command) ?? HelpText.tool)
    }
}
