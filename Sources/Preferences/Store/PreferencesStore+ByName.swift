extension PreferencesStore {
    /// The value stored under `name` now, read from memory without copying
    /// the ``snapshot``: the read path for code that reads keys by name one
    /// at a time, such as a configuration provider.
    ///
    /// A temporary value stands in its key's place while it holds
    /// (<doc:ChangingSettingsSafely>). Only stored values count: nil when
    /// the key is not stored, whatever its default.
    ///
    /// ```swift
    /// if case .int(let port)? = store.storedValue(forKey: "http.port") { listen(on: port) }
    /// ```
    public func storedValue(forKey name: String) -> PreferenceValue? {
        core.storedValue(name)
    }

    /// Whether the key `name` holds a secret: declared secret by this
    /// process (`PreferenceKey(…, secret: true)`) or listed as secret by
    /// the store, which every program that declares a secret writes
    /// (A3, <doc:ChangingSettingsSafely>).
    public func isSecret(_ name: String) -> Bool {
        core.state.withLock {
            $0.secrets.contains(name) || $0.current.snapshot.secretKeys.contains(name)
        }
    }
}
