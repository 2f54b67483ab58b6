/// What `prefs edit` runs with: the store and manifest every store command
/// has, and the environment, which names the editor (`$VISUAL`, `$EDITOR`)
/// and the user who typed `sudo` (`$SUDO_USER`).
struct EditContext: RunContext {
    let store: CommandContext
    let environment: [String: String]

    init(invocation: Invocation, tool: PrefsTool) throws {
        store = try CommandContext(invocation: invocation, tool: tool)
        environment = tool.environment
    }

    var output: ToolOutput { store.output }

    func scrubbed(_ failure: CommandFailure) async -> CommandFailure {
        await store.scrubbed(failure)
    }
}
