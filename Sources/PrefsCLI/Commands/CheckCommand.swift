import Preferences

/// `prefs check`: opens the file as the library does, failing on a corrupt
/// file instead of resetting it, and reports what is wrong.
struct CheckCommand: PrefsCommand {
    static let name = "check"
    static let help = CommandHelp(
        summary: "Validate the store file (and its values against the key manifest).",
        discussion: """
            Exits with status 4 and the reason when the file is not a valid \
            preferences file (it is reported, never reset). Prints the path and \
            the number of stored keys when all is well. With a key manifest, every \
            stored value that does not fit its declaration is reported on its \
            own line and the command exits with status 3; so is a value that the \
            manifest of any program published beside the store refuses, and a \
            key two programs declare with a different type or default.
            """,
        examples: [
            ("--suite com.example.app check", "checks that suite's file"),
            ("--manifest keys.json check", "also checks types, ranges and allowed values"),
        ])

    init(_ parsed: ParsedOptions<Self>) {}

    func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        let snapshot = store.snapshot
        let count = snapshot.values.count
        var problems = context.manifest?.problems(in: snapshot) ?? []
        // Every program's declarations: values they refuse, and keys two
        // programs declare differently.
        for key in snapshot.storedKeys where problems.allSatisfy({ $0.key != key }) {
            if let value = snapshot.values[key],
                let problem = PreferencesManifest.refusal(
                    of: value, forKey: key, by: context.programManifests)
            {
                problems.append(problem)
            }
        }
        problems += PreferencesManifest.conflicts(among: context.programManifests)
        if !problems.isEmpty {
            for problem in problems.dropLast() { context.output.error(problem.message) }
            throw CommandFailure(.invalidValue, problems[problems.count - 1].message)
        }
        context.output.print(
            "\(context.target.name): ok, \(count) \(count == 1 ? "key" : "keys")")
    }
}
