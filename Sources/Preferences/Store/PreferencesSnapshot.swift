#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An immutable view of the store at one moment: the stored values, the
/// data version, the defaults that apply to keys that are not stored, and
/// when and by whom each stored key was last changed.
///
/// ```swift
/// let snapshot = store.snapshot
/// if snapshot[.darkMode] { applyDarkTheme() }
/// print(snapshot.storedKeys)   // keys present in the file
/// print(snapshot.modification(forKey: "dark_mode")?.user ?? "never set")
/// ```
public struct PreferencesSnapshot: Sendable, Equatable {
    /// The document the snapshot was read from, or written as (<doc:FileFormat>).
    let document: StoreDocument
    /// The stored values, by key, with the temporary values that hold at
    /// the snapshot's time in place (<doc:ChangingSettingsSafely>).
    /// Defaults are not included.
    public let values: [String: PreferenceValue]
    /// When the temporary values in ``values`` end, by key.
    let temporaryEnds: [String: Date]
    /// Defaults registered with ``PreferencesStore/register(defaults:)``.
    public private(set) var registeredDefaults: [String: PreferenceValue]

    /// The app's data version that migrations advance (<doc:MigratingAtStartUp>), 0 when absent.
    public var version: Int { document.version }

    /// The keys declared secret, by this program or another that wrote the
    /// store (A3, <doc:ChangingSettingsSafely>).
    public var secretKeys: Set<String> { document.secretKeys }

    /// The sequence number of the last change committed to the store: 1, 2,
    /// 3 … one per change, never reused nor skipped, across processes,
    /// restarts and backends (H1, <doc:HistoryAndUndo>); 0 before any.
    public var sequence: Int64 { document.history.sequence }

    /// A snapshot of the given values, for tests and for building states by hand.
    public init(
        values: [String: PreferenceValue] = [:], version: Int = 0,
        registeredDefaults: [String: PreferenceValue] = [:],
        modifications: [String: PreferenceModification] = [:]
    ) {
        self.init(
            StoreDocument(
                values: values, version: version,
                modifications: ChangeLog(modifications.mapValues(ChangeRecord.init))),
            registeredDefaults: registeredDefaults)
    }

    /// The snapshot of `document`, with these registered defaults, as it
    /// reads at `now`: the document's temporary values that hold then in
    /// place.
    init(
        _ document: StoreDocument, registeredDefaults: [String: PreferenceValue] = [:],
        at now: Date = Date()
    ) {
        self.document = document
        self.values = document.temporary.effective(document.values, at: now)
        self.temporaryEnds = document.temporary.active(at: now).mapValues(\.until)
        self.registeredDefaults = registeredDefaults
    }

    /// When the temporary value `name` reads now ends; nil when the key has
    /// none (A4, <doc:ChangingSettingsSafely>).
    ///
    /// ```swift
    /// if let end = store.snapshot.temporaryValueEnd(forKey: "log_level") {
    ///     print("debug logging until \(end)")
    /// }
    /// ```
    public func temporaryValueEnd(forKey name: String) -> Date? { temporaryEnds[name] }

    /// This snapshot at `now`: the temporary values that hold then in place.
    func reading(at now: Date) -> PreferencesSnapshot {
        PreferencesSnapshot(document, registeredDefaults: registeredDefaults, at: now)
    }

    /// This snapshot with other registered defaults.
    func registering(_ defaults: [String: PreferenceValue]) -> PreferencesSnapshot {
        var snapshot = self
        snapshot.registeredDefaults = defaults
        return snapshot
    }

    /// When and by whom a stored key was last changed; nil for a key that
    /// is not stored (a default has no history) and for a key stored before
    /// the store recorded changes, or by a program that does not.
    ///
    /// ```swift
    /// if let change = store.snapshot.modification(forKey: "dark_mode"),
    ///     Date().timeIntervalSince(change.date) > 3600
    /// {
    ///     refreshCache()
    /// }
    /// ```
    public func modification(forKey name: String) -> PreferenceModification? {
        document.modifications.record(forKey: name, isStored: values[name] != nil)?.modification
    }

    /// The key's stored value, or its default when it is absent or does not
    /// decode as `Value` (see ``value(for:)`` to get the error instead).
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        guard let stored = values[key.name] else { return key.defaultValue }
        return (try? key.decode(stored)) ?? key.defaultValue
    }

    /// The key's value; throws ``PreferencesError/typeMismatch(key:expected:found:)``
    /// when the stored value does not decode as `Value`.
    public func value<Value>(for key: PreferenceKey<Value>) throws -> Value {
        guard let stored = values[key.name] else { return key.defaultValue }
        return try key.value(from: stored)
    }

    /// The stored value for a key name, else its registered default, else nil.
    public func value(forKey name: String) -> PreferenceValue? {
        values[name] ?? registeredDefaults[name]
    }

    /// Whether the key is stored in the file (a default does not count).
    public func contains(_ name: String) -> Bool { values[name] != nil }

    /// The stored keys, sorted.
    public var storedKeys: [String] { values.keys.sorted() }

    /// Whether a reader could tell the two snapshots apart: they are equal
    /// when every read gives the same answer — the same ``values``,
    /// ``version``, ``registeredDefaults``, ``secretKeys`` and ``sequence``,
    /// and for every key the same ``temporaryValueEnd(forKey:)`` and
    /// ``modification(forKey:)``.
    ///
    /// What no read of a snapshot shows does not count: the history entries
    /// the file carries (``PreferencesStore/history(for:after:since:)``
    /// reads those), temporary values that have ended, and members of the
    /// file this version does not know.
    ///
    /// A change feed (``PreferencesStore/changes()``) follows the values: it
    /// delivers a new state when a value, the version or a temporary value
    /// changed. A rewrite by another program that changes only change
    /// records or the history replaces the state without a delivery.
    public static func == (lhs: PreferencesSnapshot, rhs: PreferencesSnapshot) -> Bool {
        lhs.values == rhs.values && lhs.version == rhs.version
            && lhs.registeredDefaults == rhs.registeredDefaults
            && lhs.secretKeys == rhs.secretKeys && lhs.sequence == rhs.sequence
            && lhs.temporaryEnds == rhs.temporaryEnds
            && lhs.document.modifications.matches(
                rhs.document.modifications, storedKeys: lhs.values.keys)
    }
}
