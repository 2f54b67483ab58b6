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
    /// The stored values, by key. Defaults are not included.
    public let values: [String: PreferenceValue]
    /// The app's data version that migrations advance (<doc:MigratingAtStartUp>), 0 when absent.
    public let version: Int
    /// Defaults registered with ``PreferencesStore/register(defaults:)``.
    public let registeredDefaults: [String: PreferenceValue]
    /// When and by whom each stored key was last changed (S18, <doc:StoreGuarantees>).
    let modifications: ChangeLog
    /// Top-level members of the file this version does not know, kept for
    /// writing back (<doc:FileFormat>).
    let otherMembers: [String: PreferenceValue]
    /// The sequence number and the newest history entries (<doc:HistoryAndUndo>).
    let history: DocumentHistory
    /// The values as stored, without the temporary values in place
    /// (``values`` has those that hold at the snapshot's time).
    let storedValues: [String: PreferenceValue]
    /// Temporary values, with their ends (<doc:ChangingSettingsSafely>).
    let temporary: TemporaryValues
    /// When the temporary values in ``values`` end, by key.
    let temporaryEnds: [String: Date]
    /// The keys declared secret, by this program or another that wrote the
    /// store (A3, <doc:ChangingSettingsSafely>).
    public let secretKeys: Set<String>

    /// The sequence number of the last change committed to the store: 1, 2,
    /// 3 … one per change, never reused nor skipped, across processes,
    /// restarts and backends (H1, <doc:HistoryAndUndo>); 0 before any.
    public var sequence: Int64 { history.sequence }

    /// Every field as given: the one initializer that sets them, which the
    /// others call.
    private init(
        stored: [String: PreferenceValue], temporary: TemporaryValues,
        values: [String: PreferenceValue], temporaryEnds: [String: Date], version: Int,
        registeredDefaults: [String: PreferenceValue], modifications: ChangeLog,
        otherMembers: [String: PreferenceValue], history: DocumentHistory,
        secretKeys: Set<String>
    ) {
        self.values = values
        self.version = version
        self.registeredDefaults = registeredDefaults
        self.modifications = modifications
        self.otherMembers = otherMembers
        self.history = history
        self.storedValues = stored
        self.temporary = temporary
        self.temporaryEnds = temporaryEnds
        self.secretKeys = secretKeys
    }

    /// A snapshot of the given values, for tests and for building states by hand.
    public init(
        values: [String: PreferenceValue] = [:], version: Int = 0,
        registeredDefaults: [String: PreferenceValue] = [:],
        modifications: [String: PreferenceModification] = [:]
    ) {
        self.init(
            values: values, version: version, registeredDefaults: registeredDefaults,
            modifications: ChangeLog(modifications.mapValues(ChangeRecord.init)),
            otherMembers: [:], history: DocumentHistory())
    }

    init(
        values: [String: PreferenceValue], version: Int,
        registeredDefaults: [String: PreferenceValue],
        modifications: ChangeLog, otherMembers: [String: PreferenceValue],
        history: DocumentHistory
    ) {
        self.init(
            stored: values, temporary: TemporaryValues(), values: values, temporaryEnds: [:],
            version: version, registeredDefaults: registeredDefaults,
            modifications: modifications, otherMembers: otherMembers, history: history,
            secretKeys: [])
    }

    /// A snapshot whose reads see `temporary`'s values that hold at `now`
    /// over `stored`.
    init(
        stored: [String: PreferenceValue], temporary: TemporaryValues, at now: Date, version: Int,
        registeredDefaults: [String: PreferenceValue], modifications: ChangeLog,
        otherMembers: [String: PreferenceValue], history: DocumentHistory,
        secretKeys: Set<String> = []
    ) {
        let active = temporary.active(at: now)
        self.init(
            stored: stored, temporary: temporary, values: temporary.effective(stored, at: now),
            temporaryEnds: active.mapValues(\.until), version: version,
            registeredDefaults: registeredDefaults, modifications: modifications,
            otherMembers: otherMembers, history: history, secretKeys: secretKeys)
    }

    /// The snapshot of a document read from storage, with these registered
    /// defaults, as it reads at `now`.
    init(
        _ document: StoreDocument, registeredDefaults: [String: PreferenceValue],
        at now: Date = Date()
    ) {
        self.init(
            stored: document.values, temporary: document.temporary, at: now,
            version: document.version, registeredDefaults: registeredDefaults,
            modifications: document.modifications, otherMembers: document.otherMembers,
            history: document.history, secretKeys: document.secretKeys)
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
        PreferencesSnapshot(
            stored: storedValues, temporary: temporary, at: now, version: version,
            registeredDefaults: registeredDefaults, modifications: modifications,
            otherMembers: otherMembers, history: history, secretKeys: secretKeys)
    }

    /// This snapshot with other registered defaults.
    func registering(_ defaults: [String: PreferenceValue]) -> PreferencesSnapshot {
        PreferencesSnapshot(
            stored: storedValues, temporary: temporary, values: values,
            temporaryEnds: temporaryEnds, version: version, registeredDefaults: defaults,
            modifications: modifications, otherMembers: otherMembers, history: history,
            secretKeys: secretKeys)
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
        modifications.record(forKey: name, isStored: values[name] != nil)?.modification
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

    /// Equal values, version, registered defaults and change records.
    public static func == (lhs: PreferencesSnapshot, rhs: PreferencesSnapshot) -> Bool {
        lhs.values == rhs.values && lhs.version == rhs.version
            && lhs.registeredDefaults == rhs.registeredDefaults
            && lhs.otherMembers == rhs.otherMembers && lhs.history == rhs.history
            && lhs.temporary == rhs.temporary && lhs.temporaryEnds == rhs.temporaryEnds
            && lhs.secretKeys == rhs.secretKeys
            && lhs.modifications.matches(rhs.modifications, storedKeys: lhs.values.keys)
    }
}
