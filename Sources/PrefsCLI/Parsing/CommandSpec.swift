/// What one `prefs` command accepts, and the text its `--help` shows.
struct CommandSpec: Sendable {
    /// The word that selects it: `get`.
    let name: String
    /// The positional arguments as shown in usage: `KEY VALUE`.
    let argumentsSynopsis: String
    /// How many positional arguments it needs, and at most takes (nil: any number).
    let argumentCount: (minimum: Int, maximum: Int?)
    /// The options it accepts besides the global ones.
    let options: [OptionSpec]
    /// One line for the command list.
    let summary: String
    /// Paragraphs for its `--help`.
    let discussion: String
    /// Example invocations (without the leading `prefs`) and what they do.
    let examples: [(command: String, explanation: String)]

    func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }

    /// `prefs get KEY [--json]`.
    var usage: String {
        var parts = ["prefs", name]
        if !argumentsSynopsis.isEmpty { parts.append(argumentsSynopsis) }
        parts += options.map { "[\($0.synopsis)]" }
        return parts.joined(separator: " ")
    }
}
