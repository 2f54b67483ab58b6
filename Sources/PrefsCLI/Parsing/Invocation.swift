/// A parsed command line: which command, its positional arguments, and the
/// options given (global and the command's own).
struct Invocation: Sendable {
    /// The selected command; nil when only `--help` or `--version` was given.
    var command: CommandSpec?
    /// Positional arguments after the command name, in order.
    var arguments: [String] = []
    /// Options that take a value, by long name (`--format` → `json`); the last one given wins.
    var values: [String: String] = [:]
    /// Flags given, by long name (`--json`).
    var flags: Set<String> = []
    /// `--help` or `-h` was given.
    var wantsHelp = false
    /// `--version` was given before any command.
    var wantsVersion = false

    func value(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}
