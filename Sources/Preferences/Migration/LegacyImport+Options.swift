extension LegacyImport {
    /// Which keys of a legacy source an import takes.
    ///
    /// ```swift
    /// LegacyImport(.plist, at: plist, keys: .all)
    /// LegacyImport(.plist, at: plist, keys: .only(["dark_mode", "zoom"]))
    /// LegacyImport(.properties, at: file, keys: .prefix("app."))                       // app.x stays app.x
    /// LegacyImport(.properties, at: file, keys: .prefix("app.", removingPrefix: true)) // app.x becomes x
    /// ```
    ///
    /// Choose a list or a prefix when the source also holds other programs'
    /// keys (a UserDefaults plist holds Apple's `NS…` and `Apple…` keys).
    public struct KeySelection: Sendable {
        /// The stored name for a source key, or nil when it is not selected.
        let storedName: @Sendable (String) -> String?

        /// Every key of the source.
        public static let all = KeySelection { $0 }

        /// The named keys only.
        public static func only(_ keys: [String]) -> KeySelection {
            let wanted = Set(keys)
            return KeySelection { wanted.contains($0) ? $0 : nil }
        }

        /// The keys that start with `prefix`; with `removingPrefix`, stored
        /// without it (a key that is only the prefix is then skipped).
        public static func prefix(_ prefix: String, removingPrefix: Bool = false) -> KeySelection {
            KeySelection { name in
                guard name.hasPrefix(prefix) else { return nil }
                guard removingPrefix else { return name }
                let rest = String(name.dropFirst(prefix.count))
                return rest.isEmpty ? nil : rest
            }
        }
    }

    /// What an import does with a key that is already stored.
    public enum ConflictRule: Sendable, Equatable {
        /// The stored value stays (the default): data written by the new app
        /// is never replaced by older data, and a rerun changes nothing.
        case keepStored
        /// The source's value replaces the stored one.
        case overwrite
    }

    /// What happens to the legacy source once its data is durable in the store.
    public enum SourceCleanUp: Sendable, Equatable {
        /// Renamed to `<name>.migrated` beside it (a shared-prefs `.bak` to
        /// `<name>.bak.migrated`), so the old bytes are kept (the default).
        case rename
        /// Deleted (an envdir directory with everything in it).
        case remove
    }
}
