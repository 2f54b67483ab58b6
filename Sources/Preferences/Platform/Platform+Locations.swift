/// Where each system keeps preferences, for ``PreferencesLocation``'s
/// defaults when no environment variable names the place.
extension Platform {
    /// The directory that holds the system scope's suite directories:
    /// `/var/lib/prefs`, or `/Library/Preferences/prefs` on macOS.
    static var systemPreferencesDirectory: String {
        #if canImport(Darwin)
            "/Library/Preferences/prefs"
        #else
            "/var/lib/prefs"
        #endif
    }

    /// The user scope's directory under the home directory, when neither
    /// `PREFS_HOME` nor `XDG_CONFIG_HOME` names one: `.config/prefs`, or
    /// `Library/Application Support/prefs` on macOS.
    static var userPreferencesSubpath: String {
        #if canImport(Darwin)
            "Library/Application Support/prefs"
        #else
            ".config/prefs"
        #endif
    }
}
