/// One `prefs` command: its name, arguments, options and help, its typed
/// parsed values, and what it does.
///
/// A command is one type in one file. ``PrefsTool/commands`` lists every
/// command once, and that list drives parsing, running, `--help`, `prefs
/// help` and the completion scripts. Options are static ``Flag`` and
/// ``ValueOption`` members of the command, read in its initializer through
/// ``ParsedOptions`` of that command only:
///
/// ```swift
/// struct GetCommand: PrefsCommand {
///     static let name = "get"
///     static let arguments = CommandArguments("KEY", 1...1, completing: [.keys])
///     static let json = Flag<Self>("--json", help: "Print the value as JSON.")
///     static let options: [any OptionDeclaration] = [json]
///     static let help = CommandHelp(summary: "Print a key's value.", discussion: "…", examples: [])
///
///     let key: String
///     let json: Bool
///
///     init(_ parsed: ParsedOptions<Self>) {
///         key = parsed.arguments[0]
///         json = parsed[Self.json]
///     }
///
///     func run(_ context: CommandContext) async throws { … }
/// }
/// ```
///
/// The tool first builds the command's ``Context`` (for most commands the
/// resolved store, whose errors come first), then the command from the
/// parsed options (where option values are checked), then runs it.
protocol PrefsCommand: OptionOwner {
    /// What the command runs with: ``CommandContext`` (the store) unless it
    /// needs no store, like `help`.
    associatedtype Context: RunContext = CommandContext

    /// The word that selects it: `get`.
    static var name: String { get }
    /// Its positional arguments; none unless given.
    static var arguments: CommandArguments { get }
    /// Its summary, discussion and examples.
    static var help: CommandHelp { get }
    /// Whether the command uses the key manifest; a command that does not
    /// (`path`) runs even when the manifest cannot be read.
    static var readsManifest: Bool { get }

    /// The command with its arguments and options as typed values; throws a
    /// usage error for a value it does not accept.
    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure)

    /// Does what the command does; output goes through the context.
    func run(_ context: Context) async throws
}

extension PrefsCommand {
    static var arguments: CommandArguments { .none }
    static var options: [any OptionDeclaration] { [] }
    static var readsManifest: Bool { true }

    /// `prefs get KEY [--json] [--long]`; a required option has no brackets.
    static var usage: String {
        var parts = ["prefs", name]
        if !arguments.synopsis.isEmpty { parts.append(arguments.synopsis) }
        parts += optionSpecs.filter { !$0.isHidden }.map {
            $0.isRequired ? $0.synopsis : "[\($0.synopsis)]"
        }
        return parts.joined(separator: " ")
    }
}
