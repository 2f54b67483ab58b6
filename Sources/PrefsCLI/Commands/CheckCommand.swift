import Preferences

/// `prefs check`: opens the file as the library does, failing on a corrupt
/// file instead of resetting it, and reports what is wrong.
enum CheckCommand {
    static func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        let count = store.snapshot.values.count
        context.output.print(
            "\(context.fileURL.path): ok, \(count) \(count == 1 ? "key" : "keys")")
    }
}
