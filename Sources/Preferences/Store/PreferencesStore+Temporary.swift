#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Temporary changes (A4, <doc:ChangingSettingsSafely>).
extension PreferencesStore {
    /// Stores `value` for `key` for `duration`; then the key reads as it did
    /// before — its earlier value, or its default — by itself.
    ///
    /// Nothing has to run when the time passes: the document keeps the
    /// earlier value and the temporary one with its end, and every reader
    /// decides by its own clock which holds. Change feeds deliver the end
    /// when it comes. An ordinary ``set(_:_:)`` (or any other change) of the
    /// key ends it early. The change is one history entry, naming its end.
    ///
    /// ```swift
    /// try await store.set(.logLevel, "debug", for: .seconds(30 * 60))
    /// store.snapshot.temporaryValueEnd(forKey: "log_level")   // in 30 minutes
    /// ```
    public func set<Value>(_ key: PreferenceKey<Value>, _ value: Value, for duration: Duration)
        async throws
    {
        try checkOpen()
        let seconds =
            Double(duration.components.seconds)
            + Double(duration.components.attoseconds) / 1e18
        let until = Date(timeIntervalSinceNow: seconds)
        try await core.edit { $0.set(key, value, until: until) }
    }
}
