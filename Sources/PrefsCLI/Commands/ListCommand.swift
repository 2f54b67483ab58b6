import Preferences

/// `prefs list [--json]`.
enum ListCommand {
    static func run(_ context: CommandContext) async throws {
        let values = try await context.openStore().snapshot.values
        if context.invocation.has("--json") {
            context.output.print(ExportCommand.json(values))
            return
        }
        let lines = values.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value.jsonText)\n" }
        context.output.standardOutput(lines.joined())
    }
}
