/// What a command that needs no store runs with (`help`, `completions`):
/// the output, and the command line and tool for the few that look further.
struct ToolContext: RunContext {
    let invocation: Invocation
    let tool: PrefsTool

    init(invocation: Invocation, tool: PrefsTool) {
        self.invocation = invocation
        self.tool = tool
    }

    var output: ToolOutput { tool.output }
}
