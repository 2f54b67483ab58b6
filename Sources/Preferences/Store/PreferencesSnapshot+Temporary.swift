/// What `prefs` shows of a temporary value (A4, <doc:ChangingSettingsSafely>).
extension PreferencesSnapshot {
    /// The value `name` reads once its temporary value ends: the value it
    /// had before, or nil when it was not set. For a key without a
    /// temporary value, its value.
    package func valueAfterTemporary(forKey name: String) -> PreferenceValue? {
        document.values[name]
    }
}
