#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The values an ``PreferencesStore/edit(_:)`` transform changes.
///
/// Reads see the edit's own changes; nothing is visible to anyone else until
/// the whole transform returns and the new state is on disk.
///
/// ```swift
/// try await store.edit { prefs in
///     prefs[.launchCount] += 1
///     prefs[.lastLaunch] = Date()
///     prefs.remove(.pendingMigration)
/// }
/// ```
public struct MutablePreferences: Sendable {
    private var storage: [String: PreferenceValue]
    /// The app's data version (<doc:MigratingAtStartUp>).
    public var version: Int
    let registeredDefaults: [String: PreferenceValue]
    let limits: PreferencesLimits
    /// The first error a setter hit (setters cannot throw); the edit fails with it.
    var failure: PreferencesError?
    /// Whether any value was changed (set to something different or removed).
    private(set) var changed = false
    /// Notes a migration or an edit left for ``PreferencesStore/problems``.
    private(set) var reports: [PreferencesProblem] = []
    /// What the change is, for its history entry (``attribute(to:)``).
    private(set) var causes: [String] = []
    /// The temporary values this edit sets, by key (``set(_:_:until:)``).
    private(set) var temporaries: [String: TemporaryValues.Override] = [:]
    /// Keys this edit changed as an ordinary change: a temporary value
    /// they had ends now, even when the new value equals it. Kept only when
    /// the state the edit started from has temporary values: otherwise there
    /// is none to end, and an import of many keys need not hash each twice.
    private(set) var ordinaryKeys: Set<String> = []
    private let tracksOrdinaryKeys: Bool
    /// The history of the state the edit started from: its sequence number
    /// is the one before this change's (an undo reads the entries).
    let baseHistory: DocumentHistory

    /// An undo log for one transform of a group commit, so a transform that
    /// throws can be undone exactly — whatever it called — without copying
    /// every value beforehand.
    ///
    /// Single-key changes log the key's previous value. The first change of
    /// the whole dictionary (``removeAll()``, assigning ``values``) instead
    /// keeps the dictionary as it was when the transform began: the keys
    /// logged so far are restored into it first, and nothing more needs to
    /// be logged after that. The version, the changed flag and the reports
    /// are kept as they were at the start.
    private struct Journal: Sendable {
        var entries: [(String, PreferenceValue?)] = []
        var everything: [String: PreferenceValue]?
        var version: Int
        var changed: Bool
        var reportCount: Int
        var causeCount: Int
        var temporaries: [String: TemporaryValues.Override]
        /// Each change of ``ordinaryKeys`` and whether the key was in it:
        /// undone in reverse, so a transform does not copy the whole set
        /// (a group commit of a thousand edits would copy it a thousand
        /// times).
        var ordinaryChanges: [(key: String, wasIn: Bool)] = []
    }
    private var journal: Journal?
    /// The log's array from the last transform that succeeded, emptied:
    /// the next transform logs into it, so a batch of edits allocates the
    /// log once instead of once per edit.
    private var spareEntries: [(String, PreferenceValue?)] = []
    /// The keys that single-key changes have changed so far (a key may be
    /// listed twice, or changed back since), so that the writer finds what
    /// differs from the snapshot without comparing every stored value. nil
    /// once the whole dictionary was replaced, or once so many keys changed
    /// that comparing everything costs about the same.
    private(set) var changedKeys: [String]? = []
    /// Whether `storage` is still the snapshot's dictionary, unchanged: then
    /// a transform keeps it for its rollback at no cost (the first change
    /// copies it either way), and logs no key.
    private var storageIsSnapshot = true

    init(snapshot: PreferencesSnapshot, limits: PreferencesLimits) {
        self.storage = snapshot.values
        self.version = snapshot.version
        self.baseHistory = snapshot.document.history
        self.registeredDefaults = snapshot.registeredDefaults
        self.limits = limits
        self.tracksOrdinaryKeys = !snapshot.document.temporary.isEmpty
    }

    /// The stored values, by key.
    public internal(set) var values: [String: PreferenceValue] {
        get { storage }
        set {
            keepEverythingForRollback()
            storage = newValue
            storageIsSnapshot = false
            changed = true
            changedKeys = nil
        }
    }

    /// Before the whole dictionary changes: keep it as it was when the
    /// transform began (the current one with the logged keys undone).
    private mutating func keepEverythingForRollback() {
        guard var journal, journal.everything == nil else { return }
        var original = storage
        for (name, value) in journal.entries.reversed() { original[name] = value }
        journal.everything = original
        journal.entries = []
        self.journal = journal
    }

    private mutating func assign(_ name: String, _ value: PreferenceValue?) {
        // One lookup stores the value and gives the earlier one back: a new
        // key (all of them in an import) is hashed and looked for once.
        let earlier: PreferenceValue?
        storageIsSnapshot = false
        if let value {
            earlier = storage.updateValue(value, forKey: name)
            if let earlier, earlier == value {
                // Equal is not always the same (a string in another Unicode
                // spelling, -0.0 for 0.0): what was stored stays.
                storage.updateValue(earlier, forKey: name)
                return
            }
        } else {
            earlier = storage.removeValue(forKey: name)
            if earlier == nil { return }
        }
        if journal != nil && journal?.everything == nil {
            journal?.entries.append((name, earlier))
        }
        changed = true
        if let count = changedKeys?.count {
            if count < 64 || count < storage.count / 8 {
                changedKeys?.append(name)
            } else {
                changedKeys = nil
            }
        }
    }

    mutating func beginTransform() {
        var entries: [(String, PreferenceValue?)] = []
        swap(&entries, &spareEntries)
        journal = Journal(
            entries: entries, version: version, changed: changed, reportCount: reports.count,
            causeCount: causes.count, temporaries: temporaries)
        if storageIsSnapshot { journal?.everything = storage }
    }

    mutating func rollBackTransform() {
        guard let journal else { return }
        if let everything = journal.everything {
            storage = everything
        } else {
            for (name, value) in journal.entries.reversed() { storage[name] = value }
        }
        version = journal.version
        changed = journal.changed
        reports.removeSubrange(journal.reportCount...)
        causes.removeSubrange(journal.causeCount...)
        temporaries = journal.temporaries
        for (key, wasIn) in journal.ordinaryChanges.reversed() {
            if wasIn { ordinaryKeys.insert(key) } else { ordinaryKeys.remove(key) }
        }
        failure = nil
        self.journal = nil
    }

    mutating func endTransform() {
        guard var entries = journal?.entries else { return }
        journal = nil
        // The only reference now, so emptying keeps the buffer.
        entries.removeAll(keepingCapacity: true)
        spareEntries = entries
    }

    var snapshot: PreferencesSnapshot {
        PreferencesSnapshot(
            values: storage, version: version, registeredDefaults: registeredDefaults)
    }

    /// The key's value (its default when absent or of the wrong type); setting
    /// stores it, and setting `nil` in an optional key removes it.
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        get {
            guard let stored = storage[key.name] else { return key.defaultValue }
            return (try? key.decode(stored)) ?? key.defaultValue
        }
        set {
            do {
                self[raw: key.name] = try key.encode(newValue)
            } catch let error as PreferencesError {
                failure = failure ?? error
            } catch {
                failure =
                    failure
                    ?? .invalidValue(key: key.name, reason: ValueCoding.describe(error))
            }
        }
    }

    /// The stored value of a key name; setting nil removes the key.
    public subscript(raw name: String) -> PreferenceValue? {
        get { storage[name] }
        set {
            if let problem = limits.problem(withKey: name) {
                failure = failure ?? .invalidKey(key: name, reason: problem)
                return
            }
            assign(name, newValue)
            noteOrdinaryChange(name)
        }
    }

    /// A change that is not temporary ends the key's temporary value.
    private mutating func noteOrdinaryChange(_ name: String) {
        if !temporaries.isEmpty { temporaries[name] = nil }
        guard tracksOrdinaryKeys, ordinaryKeys.insert(name).inserted else { return }
        journal?.ordinaryChanges.append((name, false))
    }

    /// Takes `name` out of ``ordinaryKeys``: its change is a temporary one.
    private mutating func noteTemporaryChange(_ name: String) {
        guard ordinaryKeys.remove(name) != nil else { return }
        journal?.ordinaryChanges.append((name, true))
    }

    /// Sets `key` to `value` until `date`; then the key reads as it did
    /// before this change — its earlier value, or its default — with no
    /// write needed at that moment (A4, <doc:ChangingSettingsSafely>). An
    /// ordinary change of the key ends it early.
    ///
    /// ```swift
    /// try await store.edit { prefs in
    ///     prefs.set(.logLevel, "debug", until: Date().addingTimeInterval(1800))
    /// }
    /// ```
    public mutating func set<Value>(_ key: PreferenceKey<Value>, _ value: Value, until date: Date) {
        self[key] = value
        guard failure == nil, let stored = storage[key.name] else { return }
        noteTemporaryChange(key.name)
        temporaries[key.name] = TemporaryValues.Override(
            value: stored, until: TemporaryValues.storedEnd(date))
        attribute(to: "temporary until \(HistoryEntry.timestamp(date))")
    }

    /// ``set(_:_:until:)`` for a key name and a stored value.
    public mutating func set(raw name: String, _ value: PreferenceValue, until date: Date) {
        self[raw: name] = value
        guard failure == nil else { return }
        noteTemporaryChange(name)
        temporaries[name] = TemporaryValues.Override(
            value: value, until: TemporaryValues.storedEnd(date))
        attribute(to: "temporary until \(HistoryEntry.timestamp(date))")
    }

    /// Leaves a note in ``PreferencesStore/problems`` once the edit is
    /// committed — for example a migration reporting legacy entries it
    /// skipped, or an import through `store.edit` reporting what it left out.
    ///
    /// A migration's notes stay until migrations run again. An edit's notes
    /// stay while the store is open, the latest 100 of them, whether or not
    /// the edit changed anything. The notes of an edit that throws, or whose
    /// write fails, go with it.
    public mutating func report(_ message: String, key: String? = nil) {
        reports.append(PreferencesProblem(key: key, message: message))
    }

    /// Names what this change is in its history entry (``HistoryEntry/cause``)
    /// — an import and its file, say — when it is more than an edit. Edits
    /// written together name all their causes.
    ///
    /// ```swift
    /// try await store.edit { prefs in
    ///     prefs.attribute(to: "import /etc/app/legacy.properties")
    ///     try prefs.merge(imported)
    /// }
    /// ```
    public mutating func attribute(to cause: String) {
        if !causes.contains(cause) { causes.append(cause) }
    }

    /// The causes named so far, and forgets them (for the next migration step).
    mutating func takeCauses() -> [String] {
        defer { causes.removeAll() }
        return causes
    }

    /// Removes the key, so its default applies again.
    public mutating func remove<Value>(_ key: PreferenceKey<Value>) {
        remove(key.name)
    }

    /// Removes a key by name.
    public mutating func remove(_ name: String) {
        assign(name, nil)
        noteOrdinaryChange(name)
    }

    /// Removes every stored key (the data version is kept).
    public mutating func removeAll() {
        if storage.isEmpty { return }
        values = [:]
    }

    /// Stores each of `values` under its key, as setting
    /// `self[raw: key] = value` for each would, in one step.
    ///
    /// An import of thousands of keys into an empty store takes the
    /// dictionary as it is, without looking up or hashing any key again;
    /// into a store with keys, the room for all of them is made once.
    ///
    /// ```swift
    /// let contents = try LegacyReader.read(.properties, at: url)
    /// try await store.edit { try $0.merge(contents.values) }
    /// ```
    ///
    /// - Throws: ``PreferencesError/invalidKey(key:reason:)`` for a key that
    ///   cannot be stored (the first such key in byte order); nothing is
    ///   changed then.
    public mutating func merge(_ values: [String: PreferenceValue]) throws {
        var invalid: (key: String, problem: String)?
        for key in values.keys {
            guard let problem = limits.problem(withKey: key) else { continue }
            if let earlier = invalid, !key.utf8.lexicographicallyPrecedes(earlier.key.utf8) {
                continue
            }
            invalid = (key, problem)
        }
        if let invalid {
            throw PreferencesError.invalidKey(key: invalid.key, reason: invalid.problem)
        }
        if values.isEmpty { return }
        if storage.isEmpty {
            self.values = values
            return
        }
        storage.reserveCapacity(storage.count + values.count)
        for (name, value) in values {
            assign(name, value)
            noteOrdinaryChange(name)
        }
    }

    /// Sets a value by key name, converting from any `Codable` value.
    public mutating func set<Value: Encodable>(_ value: Value, forKey name: String) throws {
        let encoded = try ValueCoding.encode(value)
        if let problem = limits.problem(withKey: name) {
            throw PreferencesError.invalidKey(key: name, reason: problem)
        }
        assign(name, encoded == .null ? nil : encoded)
    }
}
