/// Whose settings a named suite holds, and so where its file is
/// (``PreferencesLocation``, <doc:ServiceSettings>).
///
/// ```swift
/// // A service and an operator's `sudo prefs --system --suite com.example.api`
/// // reach the same file.
/// let store = try await PreferencesStore(suite: "com.example.api", scope: .system)
/// ```
public enum PreferencesScope: Sendable, Hashable {
    /// The calling user's own settings, under their home directory:
    /// `$PREFS_HOME/NAME.json`, else `$XDG_CONFIG_HOME/prefs/NAME.json`,
    /// else `~/.config/prefs/NAME.json` (macOS:
    /// `~/Library/Application Support/prefs/NAME.json`). Two users reach two
    /// files.
    case user

    /// One system-wide place that a service and its operators resolve
    /// alike, whatever user each runs as: `/var/lib/prefs/NAME/NAME.json`
    /// on Linux (`$PREFS_SYSTEM_HOME/NAME/NAME.json` when that is set;
    /// macOS: `/Library/Preferences/prefs/NAME/NAME.json`). Each suite has a
    /// directory of its own, which belongs to the service's user; the store
    /// never creates it (<doc:ServiceSettings>).
    case system
}
