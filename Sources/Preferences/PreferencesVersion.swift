/// The version of the Preferences library and of the `prefs` tool, which
/// ship together; `CHANGELOG.md` lists what each version changed.
///
/// ```swift
/// print("built with Preferences \(PreferencesVersion.current)")
/// ```
public enum PreferencesVersion {
    /// The version, as `MAJOR.MINOR.PATCH`.
    public static let current = "0.2.0"
}
