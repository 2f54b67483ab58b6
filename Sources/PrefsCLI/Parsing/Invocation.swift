/// A parsed command line: which command, its positional arguments, and the
/// options given (global and the command's own).
///
/// Options are read through ``ParsedOptions`` of the command or of
/// ``GlobalOptions``, never by name.
struct Invocation: Sendable {
    /// The selected command; nil when only `--help` or `--version` was given.
    var command: (any PrefsCommand.Type)?
    /// Positional arguments after the command name, in order.
    var arguments: [String] = []
    /// Options that take a value, by long name (`--format` → `json`); the last one given wins.
    private var values: [String: String] = [:]
    /// Flags given, by long name (`--json`).
    private var flags: Set<String> = []
    /// `--help` or `-h` was given.
    var wantsHelp = false
    /// `--version` was given before any command.
    var wantsVersion = false

    /// Records an option the parser found; `value` is nil for a flag.
    mutating func record(_ option: OptionSpec, value: String?) {
        if let value {
            values[option.name] = value
        } else {
            flags.insert(option.name)
        }
    }

    /// Whether the option was given.
    func gave(_ option: OptionSpec) -> Bool {
        values[option.name] != nil || flags.contains(option.name)
    }

    /// The arguments and options as `Owner` declares them.
    func options<Owner: OptionOwner>(for owner: Owner.Type) -> ParsedOptions<Owner> {
        ParsedOptions(arguments: arguments, values: values, flags: flags)
    }

    /// The global options given.
    var global: ParsedOptions<GlobalOptions> { options(for: GlobalOptions.self) }
}
