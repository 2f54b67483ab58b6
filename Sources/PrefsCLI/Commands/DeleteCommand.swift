import Preferences

/// `prefs delete KEY`: status 1, writing nothing, when the key is not stored.
enum DeleteCommand {
    static func run(_ context: CommandContext) async throws {
        let key = context.argument(0)
        let store = try await context.openStore()
        // Decided inside the edit, on the state re-read under the lock.
        try await store.edit { preferences in
            guard preferences[raw: key] != nil else { throw CommandFailure.notSet(key) }
            preferences.remove(key)
        }
    }
}
