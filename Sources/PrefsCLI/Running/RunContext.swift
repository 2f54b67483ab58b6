/// What a command runs with, built from the parsed command line before the
/// command itself: ``CommandContext`` for commands on a store,
/// ``ToolContext`` for those that need none.
protocol RunContext: Sendable {
    /// Resolves what the command needs; throws a ``CommandFailure`` or a
    /// library error (a bad suite name, an unreadable manifest).
    init(invocation: Invocation, tool: PrefsTool) throws

    /// `failure` as it may be printed: for a store, with the secret values
    /// it quotes scrubbed.
    func scrubbed(_ failure: CommandFailure) async -> CommandFailure
}

extension RunContext {
    func scrubbed(_ failure: CommandFailure) async -> CommandFailure { failure }
}
