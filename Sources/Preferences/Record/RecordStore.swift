#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A typed record stored field by field in a preferences file: the
/// "proto-like" API (R1–R5, <doc:Records>), like Jetpack Proto DataStore's
/// `DataStore<T>` with `data` and `updateData`.
///
/// ```swift
/// struct AppSettings: PreferencesRecord {
///     var darkMode = false
///     var language = "en"
///     var mapZoom = 14.0
/// }
///
/// let settings = try await RecordStore<AppSettings>(fileURL: url)
/// if settings.value.darkMode { … }                          // synchronous, from memory
/// let updated = try await settings.update { $0.mapZoom = 15 } // durable when it returns
/// for await current in settings.changes() { apply(current) }
/// ```
///
/// The record shares the file, the lock and the in-memory state with every
/// ``PreferencesStore`` on the same file: each top-level field is one key
/// (R1, <doc:Records>), so `PreferenceKeys` declared with the same names,
/// other processes and `prefs get`/`set` all see the same values.
///
/// Evolution needs no migrations and no hand-written `init(from:)`:
/// - fields missing from the file, and missing fields of nested structs,
///   read as their `init()` values (R2, <doc:Records>);
/// - keys in the file that the record does not declare are kept by
///   ``update(_:)`` (R3, <doc:Records>), so an older app never erases a
///   newer app's fields;
/// - ``update(_:)`` writes only the top-level fields whose encoding changed
///   (R4, <doc:Records>); fields never set stay absent, so a new default in
///   `init()` reaches everyone who never set them;
/// - a field that does not decode reads as its default and is listed in
///   ``problems`` with its coding path, such as `window.width`
///   (R5, <doc:Records>); its stored value is left alone until an update
///   changes that field.
public final class RecordStore<Record: PreferencesRecord>: Sendable {
    /// The store that holds the record's fields.
    public let store: PreferencesStore
    let coding: RecordCoding<Record>
    private let cache = Locked<(generation: UInt64, record: Record)?>(nil)

    init(store: PreferencesStore) {
        self.store = store
        self.coding = RecordCoding()
    }

    /// Opens the record in the file at `fileURL` (see
    /// ``PreferencesStore/init(fileURL:migrations:corruption:limits:declaring:liveReads:)``)
    /// and publishes its fields' manifest beside the file (7.6,
    /// <doc:CommandLineTool>; see ``PreferencesStore/declare(_:)``), so
    /// `prefs` shows the record's defaults and types its fields as the
    /// record reads them. With
    /// `liveReads`, ``value`` follows other processes' writes.
    public convenience init(
        fileURL: URL, migrations: [any PreferencesMigration] = [],
        corruption: CorruptionPolicy = .fail, limits: PreferencesLimits = PreferencesLimits(),
        liveReads: Bool = true
    ) async throws {
        let manifest = try PreferencesManifest(record: Record.self)
        self.init(
            store: try await PreferencesStore(
                fileURL: fileURL, migrations: migrations, corruption: corruption, limits: limits,
                liveReads: liveReads))
        await store.declare(manifest)
    }

    /// Opens the record in the named suite at its standard location, and
    /// publishes its fields' manifest as ``init(fileURL:migrations:corruption:limits:liveReads:)`` does.
    public convenience init(
        suite: String, migrations: [any PreferencesMigration] = [],
        corruption: CorruptionPolicy = .fail, limits: PreferencesLimits = PreferencesLimits(),
        liveReads: Bool = true
    ) async throws {
        let manifest = try PreferencesManifest(record: Record.self)
        self.init(
            store: try await PreferencesStore(
                suite: suite, migrations: migrations, corruption: corruption, limits: limits,
                liveReads: liveReads))
        await store.declare(manifest)
    }

    /// The record now: stored fields over the `init()` values. Never waits
    /// on disk; decoded once per change of the store's state.
    public var value: Record {
        let (snapshot, generation) = store.core.state.withLock {
            ($0.current.snapshot, $0.current.generation)
        }
        if let cached = cache.withLock({ $0 }), cached.generation == generation {
            return cached.record
        }
        let record = decode(snapshot.values)
        cache.withLock { cache in
            if (cache?.generation ?? 0) <= generation { cache = (generation, record) }
        }
        return record
    }

    /// Things wrong with the file, including record fields that did not decode.
    public var problems: [PreferencesProblem] { store.problems }

    /// Changes the record atomically and durably, and returns it as stored.
    ///
    /// `transform` runs on the latest record (re-read under the file's lock
    /// when another process changed it). Only the top-level fields whose
    /// encoding it changed are written; other stored keys, including ones
    /// this record does not declare, stay as they are. If `transform` throws,
    /// nothing is written and the error is rethrown.
    ///
    /// A field set to the value it already has writes nothing, so a field
    /// never set stays absent even when set to its default. A field that is
    /// stored stays stored when set to a value equal to its default; an
    /// optional field set to `nil` is removed, so its `init()` value applies.
    ///
    /// ```swift
    /// let launches = try await settings.update { $0.launchCount += 1 }.launchCount
    /// ```
    @discardableResult
    public func update(_ transform: @escaping @Sendable (inout Record) throws -> Void) async throws
        -> Record
    {
        try store.checkOpen()
        let coding = self.coding
        let core = store.core
        return try await store.edit { preferences in
            let current = Self.decode(preferences.values, coding: coding, core: core)
            var next = current
            try transform(&next)
            if next == current { return current }
            let before = try coding.fields(of: current)
            let after = try coding.fields(of: next)
            for name in Set(before.keys).union(after.keys) where before[name] != after[name] {
                preferences[raw: name] = after[name]
            }
            return coding.decode(preferences.values).record
        }
    }

    /// The record now, then each new distinct record
    /// (C1, <doc:ObservingChanges>), including changes made through typed
    /// keys, other processes and `prefs set`.
    ///
    /// ```swift
    /// for await settings in settingsStore.changes() {
    ///     applyTheme(dark: settings.darkMode)
    /// }
    /// ```
    public func changes() -> AsyncStream<Record> {
        let coding = self.coding
        let core = store.core
        return store.makeFeed(
            distinctBy: { Self.decode($0.values, coding: coding, core: core) },
            transform: { _, record in record! })
    }

    private func decode(_ values: [String: PreferenceValue]) -> Record {
        Self.decode(values, coding: coding, core: store.core)
    }

    /// Decodes and reports fields that did not decode as the store's problems
    /// (S7, <doc:StoreGuarantees>).
    private static func decode(
        _ values: [String: PreferenceValue], coding: RecordCoding<Record>, core: StoreCore
    ) -> Record {
        let (record, problems) = coding.decode(values)
        for problem in problems { core.reportRecordProblem(field: problem.field, problem.problem) }
        return record
    }
}
