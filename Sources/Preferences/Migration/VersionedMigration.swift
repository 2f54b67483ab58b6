/// A migration that brings the stored data up to a data `version`
/// (M2, <doc:MigratingAtStartUp>).
///
/// It runs only when the file's `version` is lower than its own, applies its
/// steps in order, and raises the file's `version` to its own, so it never
/// runs again on that file. List versioned migrations in increasing order of
/// version; each sees the result of the ones before, and everything is
/// written in one durable replace of the file.
///
/// ```swift
/// let store = try await PreferencesStore(
///     fileURL: url,
///     migrations: [
///         VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
///         VersionedMigration(version: 2, .retype("map_zoom", as: .double)),
///         VersionedMigration(version: 3) { prefs in
///             if prefs[.language] == "en_US" { prefs[.language] = "en" }
///         },
///     ])
/// // The file now has "version" : 3; the next open runs none of them.
/// ```
///
/// A fresh file (version 0, no values) also runs them and is written with
/// the new version, so data an app writes later is never taken for old data.
///
/// If a step throws, the open fails with
/// ``PreferencesError/migrationFailed(step:reason:)`` naming the migration,
/// the step, the key and the value; nothing is written and the next open
/// tries again.
public struct VersionedMigration: PreferencesMigration {
    /// The data version this migration brings the file to.
    public let version: Int
    /// The changes, applied in order.
    public let steps: [MigrationStep]
    /// The name in error messages: "version N" unless given.
    public let name: String

    /// A migration to `version` made of ready-made steps.
    ///
    /// ```swift
    /// VersionedMigration(version: 2, .rename("old", to: "new"), .retype("zoom", as: .double))
    /// ```
    public init(version: Int, name: String? = nil, _ steps: MigrationStep...) {
        self.init(version: version, name: name, steps: steps)
    }

    /// A migration to `version` made of a list of steps.
    public init(version: Int, name: String? = nil, steps: [MigrationStep]) {
        self.version = version
        self.steps = steps
        self.name = name ?? "version \(version)"
    }

    /// A migration to `version` that runs `body`.
    ///
    /// ```swift
    /// VersionedMigration(version: 3) { prefs in
    ///     prefs[raw: "greeting"] = prefs[raw: "welcome_text"]
    /// }
    /// ```
    public init(
        version: Int, name: String? = nil,
        _ body: @escaping @Sendable (inout MutablePreferences) throws -> Void
    ) {
        self.init(version: version, name: name, steps: [MigrationStep("edit", body)])
    }

    /// A migration to `version` that runs `body`; the same as the
    /// initializer that takes a closure, for lists where a factory reads better.
    ///
    /// ```swift
    /// let migrations: [any PreferencesMigration] = [
    ///     VersionedMigration.step(version: 1) { prefs in prefs.remove("tmp") }
    /// ]
    /// ```
    public static func step(
        version: Int, name: String? = nil,
        _ body: @escaping @Sendable (inout MutablePreferences) throws -> Void
    ) -> VersionedMigration {
        VersionedMigration(version: version, name: name, body)
    }

    /// True when the stored data version is below ``version``.
    public func shouldMigrate(_ current: PreferencesSnapshot) -> Bool {
        current.version < version
    }

    /// Applies the steps in order and records ``version``.
    public func migrate(_ preferences: inout MutablePreferences) throws {
        for step in steps {
            do {
                try step.apply(to: &preferences)
                if let failure = preferences.failure { throw failure }
            } catch {
                let reason = (error as? PreferencesError)?.description ?? "\(error)"
                throw PreferencesError.migrationFailed(
                    step: "\(name): \(step.summary)", reason: reason)
            }
        }
        preferences.version = max(preferences.version, version)
    }
}
