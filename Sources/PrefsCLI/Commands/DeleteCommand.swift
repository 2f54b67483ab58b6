import Preferences

/// `prefs delete KEY`: status 1, writing nothing, when the key is not stored.
struct DeleteCommand: PrefsCommand {
    static let name = "delete"
    static let arguments = CommandArguments("KEY", 1...1, completing: [.keys])
    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let options: [any OptionDeclaration] = [wait]
    static let help = CommandHelp(
        summary: "Remove a key, so its default applies again.",
        discussion: "Exits with status 1, changing nothing, when the key is not stored.",
        examples: [("delete language", "removes the stored language")])

    let key: String
    let wait: Duration?

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        key = parsed.arguments[0]
        wait = try ReplicaWait.timeout(parsed[Self.wait])
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        // Decided inside the edit, on the state re-read under the lock.
        try await store.edit { preferences in
            guard preferences[raw: key] != nil else { throw CommandFailure.notSet(key) }
            preferences.remove(key)
        }
        try await ReplicaWait.afterWrite(store, timeout: wait, output: context.output)
    }
}
