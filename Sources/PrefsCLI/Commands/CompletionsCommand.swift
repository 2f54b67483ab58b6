/// `prefs completions bash|zsh|fish`: prints a completion script for the
/// shell.
///
/// The scripts are written from ``PrefsTool/commands``; what depends on
/// the machine (suite names, keys) they ask `prefs` for when Tab is
/// pressed, through the hidden `--list suites` and `--list keys`, which
/// print one name per line and nothing at all when the store cannot be
/// read.
struct CompletionsCommand: PrefsCommand {
    typealias Context = ToolContext

    /// The shells a script is written for.
    enum Shell: String, CaseIterable {
        case bash, zsh, fish
    }

    /// What `--list` prints.
    enum List: String, CaseIterable {
        case suites, keys
    }

    /// A script, or a list for one.
    enum Request {
        case script(Shell)
        case list(List)
    }

    static let name = "completions"
    static let arguments = CommandArguments(
        "SHELL", 0...1, completing: [.words(Shell.allCases.map(\.rawValue))])
    static let list = ValueOption<Self>(
        "--list", "WHAT", help: "For the scripts: print the suites or keys to offer.",
        hidden: true)
    static let options: [any OptionDeclaration] = [list]
    static let help = CommandHelp(
        summary: "Print a shell completion script (bash, zsh or fish).",
        discussion: """
            The script completes commands, options, --format and --type values, \
            suite names (the stores in the default directory), file paths, and \
            the keys of get, set, delete and watch: those the key manifest \
            declares and those stored, read when Tab is pressed from the store \
            the global options already typed select.
            """,
        examples: [
            ("completions bash > ~/.local/share/bash-completion/completions/prefs", "for bash"),
            ("completions zsh > ~/.zfunc/_prefs", "for zsh, with ~/.zfunc in $fpath"),
            ("completions fish > ~/.config/fish/completions/prefs.fish", "for fish"),
        ])

    let request: Request

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        if let name = parsed[Self.list] {
            guard let list = List(rawValue: name) else {
                throw .usage("unknown list '\(name)' (use suites or keys)", usage: Self.self)
            }
            if let extra = parsed.arguments.first {
                throw .usage("unexpected argument '\(extra)'", usage: Self.self)
            }
            request = .list(list)
            return
        }
        guard let name = parsed.arguments.first else {
            throw .usage("missing \(Self.arguments.synopsis)", usage: Self.self)
        }
        guard let shell = Shell(rawValue: name) else {
            throw .usage("unknown shell '\(name)' (use bash, zsh or fish)", usage: Self.self)
        }
        request = .script(shell)
    }

    func run(_ context: ToolContext) async throws {
        let lines: [String]
        switch request {
        case .script(let shell):
            context.output.standardOutput(CompletionScript.text(for: shell))
            return
        case .list(.suites):
            lines = CompletionLists.suites(environment: context.tool.environment)
        case .list(.keys):
            lines = await CompletionLists.keys(invocation: context.invocation, tool: context.tool)
        }
        context.output.standardOutput(lines.map { $0 + "\n" }.joined())
    }
}
