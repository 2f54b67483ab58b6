import Preferences

/// `prefs get KEY [--json] [--long]`.
enum GetCommand {
    static func run(_ context: CommandContext) async throws {
        let key = context.argument(0)
        let snapshot = try await context.openStore().snapshot
        let stored = snapshot.values[key]
        guard let value = stored ?? context.manifest?[key]?.defaultValue else {
            throw CommandFailure.notSet(key)
        }
        let json = context.invocation.has("--json")
        guard context.invocation.has("--long") else {
            context.output.print(render(value, json: json))
            return
        }
        if json {
            let defaults = stored == nil ? [key: value] : [:]
            context.output.print(
                ListCommand.entry(key, in: snapshot, defaults: defaults, long: true).jsonText)
            return
        }
        let note =
            stored == nil ? "default" : ListCommand.changeText(snapshot.modification(forKey: key))
        context.output.print("\(render(value, json: json))  # \(note)")
    }

    /// Strings raw (unless `json`), everything else as compact JSON.
    static func render(_ value: PreferenceValue, json: Bool) -> String {
        if !json, case .string(let text) = value { return text }
        return value.jsonText
    }
}
