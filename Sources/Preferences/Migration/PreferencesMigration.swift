/// One step that moves stored data forward, run while a store opens
/// (<doc:MigratingAtStartUp>).
///
/// It has the shape of Jetpack DataStore's `DataMigration`: the store asks
/// each migration in order whether it should run against the state so far,
/// lets it change that state, writes the result once, and only after the
/// write is durable calls ``cleanUp()`` on the migrations that ran. All of
/// it happens under the cross-process lock, before the first read.
///
/// ```swift
/// struct DropLegacyFlag: PreferencesMigration {
///     func shouldMigrate(_ current: PreferencesSnapshot) -> Bool {
///         current.contains("legacy_flag")
///     }
///     func migrate(_ preferences: inout MutablePreferences) {
///         preferences.remove("legacy_flag")
///     }
/// }
/// let store = try await PreferencesStore(fileURL: url, migrations: [DropLegacyFlag()])
/// ```
///
/// A migration that throws fails the open: nothing is written, no clean-up
/// runs, and the next open tries again. Migrations must therefore be
/// idempotent with respect to their sources (running one twice, as happens
/// after a crash between the write and the clean-up, changes nothing the
/// second time).
public protocol PreferencesMigration: Sendable {
    /// A name for error messages. Defaults to the type's name.
    var name: String { get }

    /// Whether ``migrate(_:)`` has work to do given the state so far.
    func shouldMigrate(_ current: PreferencesSnapshot) throws -> Bool

    /// Changes the state; sees the result of the migrations before it.
    func migrate(_ preferences: inout MutablePreferences) throws

    /// Runs after the new state is durable (for example, removes a legacy
    /// file). A failure here is reported in ``PreferencesStore/problems``;
    /// the migrated data is already safe.
    func cleanUp() throws
}

extension PreferencesMigration {
    /// The type's name.
    public var name: String { "\(Self.self)" }
    /// Nothing to clean up.
    public func cleanUp() throws {}
}
