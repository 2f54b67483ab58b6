/// One change to stored keys inside a ``VersionedMigration``: rename,
/// retype, split, merge, remove, or any edit you write yourself.
///
/// Steps are values; a versioned migration applies its steps in order, each
/// seeing the result of the one before. A step that finds none of its keys
/// stored does nothing, so steps are safe on files that never held the old
/// keys (a fresh install).
///
/// ```swift
/// VersionedMigration(
///     version: 2,
///     .rename("zoom", to: "map_zoom"),
///     .retype("map_zoom", as: .double),
///     .split("window") { value in
///         guard case .string(let text) = value else { return [:] }
///         let parts = text.split(separator: "x").map { PreferenceValue(stringLiteral: String($0)) }
///         return ["window_width": parts[0], "window_height": parts[1]]
///     },
///     .remove("legacy_flag")
/// )
/// ```
///
/// A step that throws fails the whole open: nothing is written, and the
/// error names the step, the key and the value.
public struct MigrationStep: Sendable {
    /// What the step does, for error messages ("rename 'zoom' to 'map_zoom'").
    public let summary: String
    private let body: @Sendable (inout MutablePreferences) throws -> Void

    /// A step that runs `body`; `summary` names it in error messages.
    public init(
        _ summary: String, _ body: @escaping @Sendable (inout MutablePreferences) throws -> Void
    ) {
        self.summary = summary
        self.body = body
    }

    /// Applies the step.
    public func apply(to preferences: inout MutablePreferences) throws {
        try body(&preferences)
    }

    /// Moves the value of `old` to `new`, replacing any value stored at
    /// `new`. Nothing happens when `old` is not stored.
    public static func rename(_ old: String, to new: String) -> MigrationStep {
        MigrationStep("rename '\(old)' to '\(new)'") { preferences in
            guard old != new, let value = preferences[raw: old] else { return }
            preferences[raw: new] = value
            preferences.remove(old)
        }
    }

    /// Converts the value of `key` to `type` (for example the string
    /// `"14.5"` to the number 14.5). Throws, naming the key and the value,
    /// when it does not convert. Nothing happens when `key` is not stored.
    public static func retype(_ key: String, as type: ValueConversion) -> MigrationStep {
        MigrationStep("retype '\(key)' as \(type)") { preferences in
            guard let value = preferences[raw: key] else { return }
            guard let converted = type.convert(value) else {
                throw PreferencesError.invalidValue(
                    key: key, reason: "\(value.jsonText.prefix(80)) is not a valid \(type)")
            }
            preferences[raw: key] = converted == .null ? nil : converted
        }
    }

    /// Converts the value stored for a typed key to the key's type.
    ///
    /// ```swift
    /// .retype(PreferenceKeys.mapZoom)   // "14.5" → 14.5
    /// ```
    public static func retype<Value>(_ key: PreferenceKey<Value>) -> MigrationStep {
        retype(key.name, as: ValueConversion(of: key))
    }

    /// Replaces `key` by the keys `body` makes from its value. Nothing
    /// happens when `key` is not stored. The returned keys replace stored
    /// ones of the same name; returning `key` itself keeps it.
    public static func split(
        _ key: String,
        _ body: @escaping @Sendable (PreferenceValue) throws -> [String: PreferenceValue]
    ) -> MigrationStep {
        MigrationStep("split '\(key)'") { preferences in
            guard let value = preferences[raw: key] else { return }
            let parts = try body(value)
            preferences.remove(key)
            for (name, part) in parts { preferences[raw: name] = part == .null ? nil : part }
        }
    }

    /// Replaces `keys` by one key, `target`, whose value `body` makes from
    /// the values of those that are stored. Nothing happens when none is
    /// stored; `body` returning nil leaves `target` unset.
    public static func merge(
        _ keys: [String], into target: String,
        _ body: @escaping @Sendable ([String: PreferenceValue]) throws -> PreferenceValue?
    ) -> MigrationStep {
        MigrationStep("merge \(keys.map { "'\($0)'" }.joined(separator: ", ")) into '\(target)'") {
            preferences in
            var found: [String: PreferenceValue] = [:]
            for key in keys { found[key] = preferences[raw: key] }
            guard !found.isEmpty else { return }
            let merged = try body(found)
            for key in keys { preferences.remove(key) }
            preferences[raw: target] = merged == .null ? nil : merged
        }
    }

    /// Removes `keys`, so their defaults apply again.
    public static func remove(_ keys: String...) -> MigrationStep {
        MigrationStep("remove \(keys.map { "'\($0)'" }.joined(separator: ", "))") { preferences in
            for key in keys { preferences.remove(key) }
        }
    }

    /// Any change you write: reads and writes through typed or raw subscripts.
    ///
    /// ```swift
    /// .edit("count launches from 1") { prefs in prefs[.launchCount] += 1 }
    /// ```
    public static func edit(
        _ summary: String = "edit",
        _ body: @escaping @Sendable (inout MutablePreferences) throws -> Void
    ) -> MigrationStep {
        MigrationStep(summary, body)
    }
}
