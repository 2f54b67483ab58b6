import Preferences

/// `prefs get KEY [--json]`.
enum GetCommand {
    static func run(_ context: CommandContext) async throws {
        let key = context.argument(0)
        let store = try await context.openStore()
        guard let value = store.snapshot.values[key] ?? context.manifest?[key]?.defaultValue
        else {
            throw CommandFailure.notSet(key)
        }
        context.output.print(render(value, json: context.invocation.has("--json")))
    }

    /// Strings raw (unless `json`), everything else as compact JSON.
    static func render(_ value: PreferenceValue, json: Bool) -> String {
        if !json, case .string(let text) = value { return text }
        return value.jsonText
    }
}
