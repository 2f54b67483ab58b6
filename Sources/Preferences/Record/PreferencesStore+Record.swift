extension PreferencesStore {
    /// The record `type` stored in this store's file, sharing its state,
    /// lock and change feed.
    ///
    /// ```swift
    /// let store = try await PreferencesStore(suite: "com.example.app")
    /// let settings = store.record(AppSettings.self)
    /// try await settings.update { $0.darkMode = true }
    /// store[.darkMode]   // true, when AppSettings names the field "dark_mode"
    /// ```
    public func record<Record: PreferencesRecord>(_ type: Record.Type) -> RecordStore<Record> {
        RecordStore(store: self)
    }
}
