import Preferences

/// `prefs check`: opens the file as the library does, failing on a corrupt
/// file instead of resetting it, and reports what is wrong.
enum CheckCommand {
    static func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        let snapshot = store.snapshot
        let count = snapshot.values.count
        let problems = context.manifest?.problems(in: snapshot) ?? []
        if !problems.isEmpty {
            for problem in problems.dropLast() { context.output.error(problem.message) }
            throw CommandFailure(.invalidValue, problems[problems.count - 1].message)
        }
        context.output.print(
            "\(context.storeName): ok, \(count) \(count == 1 ? "key" : "keys")")
    }
}
