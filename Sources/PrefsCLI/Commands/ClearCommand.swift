/// `prefs clear`: removes every stored key.
enum ClearCommand {
    static func run(_ context: CommandContext) async throws {
        try await context.openStore().clear()
    }
}
