/// The text a command's `--help` shows besides its usage and options.
struct CommandHelp: Sendable {
    /// One line for the command list.
    let summary: String
    /// A paragraph for its `--help`, wrapped when printed.
    let discussion: String
    /// Example invocations (without the leading `prefs`) and what they do.
    let examples: [(command: String, explanation: String)]
}
