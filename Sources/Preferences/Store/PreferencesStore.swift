#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A typed, durable, observable key-value store backed by one JSON file.
///
/// Reads are synchronous and come from memory (S1). Writes are `async` and
/// return once the new state is on disk (S2). Every writer, in this process
/// or another (including the `prefs` tool), takes the file's lock and
/// re-reads before it writes (S3), so no write is lost.
///
/// ```swift
/// extension PreferenceKeys {
///     static let darkMode = PreferenceKey<Bool>("dark_mode", default: false)
/// }
///
/// let store = try await PreferencesStore(suite: "com.example.app")
/// if store[.darkMode] { … }
/// try await store.set(.darkMode, true)
/// for await dark in store.changes(.darkMode) { applyTheme(dark) }
/// ```
///
/// Handles opened on the same file in one process share one state (S9).
///
/// ## Live reads
///
/// An open store keeps itself current (S16): a write by another process —
/// another instance of the service, `prefs set`, an editor — reaches
/// `store[key]`, ``snapshot``, record values and change feeds with no call
/// to ``reload()``. The store watches its file's directory from open until
/// the last handle on the file goes away; reads never touch the disk, so
/// they stay as fast as with live reads off.
///
/// Staleness bound: a write by another process is visible to reads within a
/// few milliseconds of that process's write returning, typically before it
/// returns (the directory watch reports the rename onto the name, and the
/// store re-reads the file, while the writer is still syncing the
/// directory). A write made by an editor in several steps settles for 25 ms
/// first. Where the directory cannot be watched (it does not exist yet, or
/// the system's watch limits are reached) the store polls the file every
/// 20 ms instead, so reads are then at most about 25 ms behind, and it goes
/// back to the watch as soon as it can. A process has one directory watch
/// per directory (one inotify instance on Linux) however many stores it
/// opens.
///
/// Pass `liveReads: false` to open a handle that sees other processes'
/// writes only after ``reload()``, while a change feed is active, or when it
/// writes (every write re-reads the file first, so a write never overwrites
/// another process's change). Handles on one file share their state, so
/// while any handle on the file has live reads on, all of them see changes.
public final class PreferencesStore: Sendable {
    @usableFromInline
    let core: StoreCore
    /// Keeps the file watched while this handle lives (live reads on).
    let liveReader: LiveReader?
    /// Whether this handle is closed, and the feeds it made.
    let handle = StoreHandle()

    /// Opens the store in the file at `fileURL`, running pending `migrations`
    /// before the first read (<doc:MigratingAtStartUp>).
    ///
    /// A missing file is an empty store; its directory is created (mode
    /// 0700) on the first write.
    ///
    /// - Parameters:
    ///   - fileURL: the store's file.
    ///   - migrations: run in order while opening; see ``PreferencesMigration``.
    ///   - corruption: what to do with a file that is not a valid preferences file.
    ///   - limits: size limits for the file, keys and nesting, and the history's.
    ///     With `corruption`, those of the first open of a file in this
    ///     process while any handle on it is open (S9, <doc:StoreGuarantees>).
    ///   - keys: the keys this program reads; their manifest is published
    ///     beside the file (see ``declare(_:)``).
    ///   - liveReads: keep reads current with other processes' writes while
    ///     this handle is open (see "Live reads" above); `false` leaves them
    ///     as of the last ``reload()``, write or change feed.
    /// - Throws: ``PreferencesError/corrupted(file:reason:)`` (with `.fail`),
    ///   ``PreferencesError/io(operation:path:code:message:)``, or a migration's error.
    public convenience init(
        fileURL: URL, migrations: [any PreferencesMigration] = [],
        corruption: CorruptionPolicy = .fail, limits: PreferencesLimits = PreferencesLimits(),
        declaring keys: [PreferenceKeys] = [], liveReads: Bool = true
    ) async throws {
        try await self.init(
            storage: FileStorage(
                fileURL: fileURL, maxFileSize: limits.maxFileSize, lockTimeout: limits.lockTimeout),
            migrations: migrations, corruption: corruption, limits: limits, declaring: keys,
            liveReads: liveReads)
    }

    /// Opens the named suite at its standard location in `scope` (see
    /// ``PreferencesLocation``): the calling user's own (the default), or
    /// the system-wide one that a service and its operators' `prefs
    /// --system` share (<doc:ServiceSettings>).
    ///
    /// ```swift
    /// let store = try await PreferencesStore(suite: "com.example.api", scope: .system)
    /// ```
    ///
    /// In the system scope the suite's directory
    /// (`/var/lib/prefs/NAME`) must exist: the store never creates it, as
    /// it belongs to the service's user.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)``
    ///   naming the directory and how to create it, when the system scope's
    ///   directory is missing; otherwise as ``init(fileURL:migrations:corruption:limits:declaring:liveReads:)``.
    public convenience init(
        suite: String, scope: PreferencesScope = .user, migrations: [any PreferencesMigration] = [],
        corruption: CorruptionPolicy = .fail, limits: PreferencesLimits = PreferencesLimits(),
        declaring keys: [PreferenceKeys] = [], liveReads: Bool = true
    ) async throws {
        if scope == .system { try PreferencesLocation.checkSystemDirectory(suite: suite) }
        try await self.init(
            storage: PreferencesLocation.storage(suite: suite, scope: scope, limits: limits),
            migrations: migrations, corruption: corruption, limits: limits, declaring: keys,
            liveReads: liveReads)
    }

    /// Opens a store on any backend, for example ``InMemoryStorage`` in tests.
    /// With `liveReads`, the store follows the backend's watch while open.
    public init(
        storage: any PreferencesStorage, migrations: [any PreferencesMigration] = [],
        corruption: CorruptionPolicy = .fail, limits: PreferencesLimits = PreferencesLimits(),
        declaring keys: [PreferenceKeys] = [], liveReads: Bool = true
    ) async throws {
        // A key that cannot describe itself fails before anything is opened.
        let manifest = keys.isEmpty ? nil : try PreferencesManifest(keys: keys)
        let opening = storage.beginOpening()
        defer { opening.end() }
        core = StoreRegistry.core(
            for: storage, identity: opening.identity, limits: limits, corruption: corruption)
        liveReader = try await core.open(
            migrations: migrations, corruption: corruption, liveReads: liveReads)
        if let manifest { await core.declare(manifest) }
        if liveReader != nil { core.scheduleReplica() }
    }

    /// Publishes `manifest` as (part of) the keys this program reads, so
    /// that `prefs` types, validates and shows defaults as the program reads
    /// them, with no `--manifest` (7.6, <doc:CommandLineTool>).
    ///
    /// The file backend writes the manifest beside the store's file
    /// (`default.json` → `default.keys.json`; see
    /// ``PreferencesManifest/publishedName(forStoreNamed:)``) under the
    /// file's lock, atomically and durably, and only when its content
    /// changes, so a service that starts a thousand times writes it once.
    /// Declarations made through every handle on the file in this process
    /// add up; when two programs declare different keys for one file, the
    /// last to open publishes its own. Backends without a place for a
    /// manifest publish nothing. Opening with `declaring:` or opening a
    /// ``RecordStore`` calls this for you.
    ///
    /// A manifest that cannot be written (a read-only directory, say) is
    /// listed in ``problems`` and does not stop the store.
    ///
    /// ```swift
    /// let store = try await PreferencesStore(suite: "com.example.app")
    /// await store.declare(try PreferencesManifest(keys: [PreferenceKeys.darkMode]))
    /// ```
    public func declare(_ manifest: PreferencesManifest) async {
        await core.declare(manifest)
    }

    /// Treats `keys` as secrets in this process's writes, as declaring them
    /// with `secret: true` does, without publishing a manifest: from the
    /// next write on, the store lists them as secret and its history records
    /// that they changed, never their values (A3, <doc:ChangingSettingsSafely>).
    /// For code that learns which keys are secret from elsewhere, such as
    /// `prefs` from the manifests in force, or a configuration provider
    /// given secret keys.
    ///
    /// ```swift
    /// store.treatAsSecret(["db.password"])
    /// try await store.edit { $0[raw: "db.password"] = "s3cret" }   // history: "db.password (secret)"
    /// ```
    public func treatAsSecret(_ keys: Set<String>) {
        guard !keys.isEmpty else { return }
        core.state.withLock { $0.secrets.formUnion(keys) }
    }

    /// Where the data lives (a file path for the file backend).
    public var location: String { core.storage.location }

    /// The backend.
    public var storage: any PreferencesStorage { core.storage }

    // MARK: Reading

    /// The key's value: the stored value, or the key's default when it is not
    /// stored or the stored value does not decode as `Value` (S7; the
    /// mismatch is then listed in ``problems``). Never waits on disk.
    @inlinable
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        guard let stored = core.storedValue(key.name) else { return key.defaultValue }
        if let value = key.fastDecode(stored) { return value }
        return readSlowly(key, stored)
    }

    /// The general read path: Codable decoding, and S7 reporting on a mismatch.
    @usableFromInline
    func readSlowly<Value>(_ key: PreferenceKey<Value>, _ stored: PreferenceValue) -> Value {
        do {
            return try key.value(from: stored)
        } catch let error as PreferencesError {
            core.reportMismatch(key: key.name, error: error)
        } catch {}
        return key.defaultValue
    }

    /// The key's value, throwing ``PreferencesError/typeMismatch(key:expected:found:)``
    /// when the stored value does not decode as `Value`.
    public func value<Value>(for key: PreferenceKey<Value>) throws -> Value {
        try core.snapshot.value(for: key)
    }

    /// The whole state at this moment.
    public var snapshot: PreferencesSnapshot { core.snapshot }

    /// Things wrong that did not stop the store: stored values of the wrong
    /// type that reads have met, a corrupt file written by another program,
    /// a migration clean-up that failed. A corrupt file that the corruption
    /// policy moved aside stays listed, with where it went, for as long as
    /// the store is open, even once a valid file is read again.
    public var problems: [PreferencesProblem] { core.problems }

    /// Registers defaults for keys that have no typed declaration (read with
    /// ``PreferencesSnapshot/value(forKey:)``). They apply to this file only
    /// and are never written.
    public func register(defaults: [String: PreferenceValue]) {
        core.register(defaults: defaults)
    }

    /// Re-reads the file if another process changed it. With live reads on
    /// this is rarely needed: it makes a write that may not have been
    /// noticed yet (within the bound above) visible now.
    public func reload() async throws {
        try checkOpen()
        try await core.reload()
    }

    // MARK: Writing

    /// Stores `value` for `key`; durable when it returns. Storing `nil` in an
    /// optional key removes it. Storing the value already stored writes nothing.
    public func set<Value>(_ key: PreferenceKey<Value>, _ value: Value) async throws {
        try checkOpen()
        try await core.edit { $0[key] = value }
    }

    /// Removes `key`, so its default applies again.
    public func remove<Value>(_ key: PreferenceKey<Value>) async throws {
        try checkOpen()
        try await core.edit { $0.remove(key) }
    }

    /// Removes every stored key (the data version is kept).
    public func clear() async throws {
        try checkOpen()
        try await core.edit { $0.removeAll() }
    }

    /// Applies `transform` atomically and durably: everything it changes is
    /// written in one replace of the file, or nothing is.
    ///
    /// The transform runs on the store's queue while the file's lock is held,
    /// on the latest state (re-read if another process changed it); keep it
    /// short and free of side effects. If it throws, nothing is written for
    /// it and the error is rethrown; edits by other callers are unaffected.
    /// Cancelling the calling task before a write has picked the edit up
    /// throws `CancellationError` and changes nothing; an edit a write has
    /// picked up completes normally.
    ///
    /// ```swift
    /// let launches = try await store.edit { prefs in
    ///     prefs[.launchCount] += 1
    ///     return prefs[.launchCount]
    /// }
    /// ```
    @discardableResult
    public func edit<Result: Sendable>(
        _ transform: @escaping @Sendable (inout MutablePreferences) throws -> Result
    ) async throws -> Result {
        try checkOpen()
        return try await core.edit(transform)
    }
}
