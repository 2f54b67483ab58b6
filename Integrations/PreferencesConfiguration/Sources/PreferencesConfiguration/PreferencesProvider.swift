import Configuration
import Logging
import Metrics
import Preferences

/// A swift-configuration provider that reads a ``Preferences/PreferencesStore``:
/// durable settings, changed by the service itself, by another process or
/// by an operator's `prefs set`, seen by `ConfigReader`'s `watch` methods
/// as soon as the store sees them.
///
/// The provider reads the store it is given, on any backend (a file, memory,
/// or etcd), and never blocks its caller on a disk or a network:
/// - ``value(forKey:type:)`` and ``snapshot()`` read the store's memory:
///   synchronous, with no I/O; a snapshot is a value;
/// - ``fetchValue(forKey:type:)`` re-reads the backend and the published
///   manifests first, awaiting both, so it returns the latest value even
///   where a change has not reached this process yet;
/// - ``watchValue(forKey:type:updatesHandler:)`` and
///   ``watchSnapshot(updatesHandler:)`` follow the store's change feeds: the
///   current value first, then each change, whichever process made it;
/// - ``setValue(_:forKey:)`` writes where a read of the same key looks.
///
/// A key's components joined with ``separator`` name the stored key
/// (`http.port` reads the key `http.port`). When no such key is stored, a
/// key also reaches into a stored JSON object, such as a record's field:
/// `window.width` reads the field `width` of the object stored under
/// `window`. Only stored values count: a store's registered defaults do not
/// hide the providers after this one.
///
/// Values convert as swift-configuration's JSON provider converts them:
/// `string`, `int`, `double` and `bool` read the stored scalar; an integer
/// reads as a `double` when a `Double` holds it exactly, a number with no
/// fractional part as an `int`, a bool as the number 1 or 0 and a number as
/// a bool (true unless zero); `bytes` reads a `Data` value's base64 text,
/// and the array types read JSON arrays of those. Any other stored value
/// fails with ``PreferencesProviderError``, which reads as
/// swift-configuration's own providers' conversion error. A key that the
/// store's manifests or its file declare secret comes out with
/// `isSecret: true`, so access logs redact it.
///
/// While it lives, until the store is closed, the provider follows the
/// store in a task of its own (the store watches its file, or etcd,
/// meanwhile, as for any change feed): it reads the manifests again, logs
/// the store's problems and other programs' changes to its `Logger`, and
/// records its metrics (the Preferences article "Using Preferences with
/// swift-configuration" lists both).
///
/// ```swift
/// let store = try await PreferencesStore(suite: "com.example.service")
/// let provider = PreferencesProvider(store: store, logger: logger)
/// let config = ConfigReader(providers: [provider, EnvironmentVariablesProvider()])
/// let port = config.int(forKey: "http.port", default: 8080)
/// try await config.watchInt(forKey: "http.workers", default: 4) { updates in
///     for await workers in updates { pool.resize(to: workers) }
/// }
/// try await provider.setValue(8, forKey: "http.workers")
/// ```
public final class PreferencesProvider: Sendable {
    /// The store the provider reads and writes.
    public let store: PreferencesStore

    /// What joins a key's components into a stored key's name ("." by default).
    public let separator: String

    /// "PreferencesProvider[LOCATION]", where LOCATION is the store's file
    /// path or etcd key.
    public let providerName: String

    /// The manifests published beside the store, as last read in the background.
    let follower: ProviderFollower
    let lookup: KeyLookup
    let logger: Logger
    let metrics: ProviderMetrics
    /// Follows the store for the provider's lifetime: manifests, problems,
    /// other processes' changes, gauges.
    let following: Task<Void, Never>

    /// A provider over `store`; it does no I/O.
    ///
    /// Which keys are secret, and which types keys are declared with, come
    /// from the key manifests published beside the store. The provider
    /// reads them in the background, never on the caller's thread: first
    /// as it starts, then after every change the store sees (its own watch
    /// of its file, or of etcd) and every `refreshInterval`, and again in
    /// ``fetchValue(forKey:type:)``. Until the first read completes, the
    /// keys given here, those this process declares secret and those the
    /// store lists as secret (every program that declares a secret lists
    /// it in the store with its first write) are secret.
    ///
    /// The same task logs, to `logger`, each of the store's problems when
    /// it appears and when it clears, and at debug level each change that
    /// another program made, and records the provider's metrics with
    /// `metrics` (the Preferences article "Using Preferences with
    /// swift-configuration" lists both). It ends when the provider goes,
    /// or when the store is closed.
    ///
    /// - Parameters:
    ///   - store: the store to read, on any backend.
    ///   - separator: what joins a key's components into a stored key's name.
    ///   - secretKeys: stored keys to treat as secret besides those the
    ///     store's manifests and file declare (for a store whose backend
    ///     publishes no manifests, such as memory).
    ///   - logger: where the provider logs; by default the process's
    ///     logging system, under the label `PreferencesProvider`.
    ///   - metrics: what makes the provider's metrics; by default the
    ///     process's metrics system.
    ///   - refreshInterval: how often the manifests and the registered
    ///     replicas are read again when the store does not change.
    public init(
        store: PreferencesStore, separator: String = ".", secretKeys: Set<String> = [],
        logger: Logger = Logger(label: "PreferencesProvider"),
        metrics: any MetricsFactory = MetricsSystem.factory,
        refreshInterval: Duration = .seconds(5)
    ) {
        self.store = store
        self.separator = separator
        self.providerName = "PreferencesProvider[\(store.location)]"
        self.lookup = KeyLookup(separator: separator)
        var logger = logger
        logger[metadataKey: "preferences.location"] = .string(store.location)
        self.logger = logger
        let follower = ProviderFollower(storage: store.storage, givenSecrets: secretKeys)
        self.follower = follower
        let metrics = ProviderMetrics(
            factory: metrics, location: store.location,
            conflictsSoFar: store.activity.retriedWriteConflicts)
        self.metrics = metrics
        // Other programs' changes are logged from those after this one.
        let sequence = store.snapshot.sequence
        self.following = Task.detached { [store] in
            await ProviderFollowing(
                store: store, follower: follower, logger: logger, metrics: metrics,
                refreshInterval: refreshInterval, startSequence: sequence
            ).run()
        }
    }

    deinit {
        following.cancel()
    }

    /// Whether `name` is secret by this process's declarations, the
    /// store's document, the manifests or the initializer, now.
    func isSecret(_ name: String) -> Bool {
        store.isSecret(name) || follower.declaresSecret(name)
    }

    /// Every key secret now, by any of the sources ``isSecret(_:)`` asks.
    func secretKeys(besides state: PreferencesSnapshot) -> Set<String> {
        state.secretKeys.union(store.secretKeys).union(follower.current.secrets)
    }

    /// `state` as a configuration snapshot: a value, whose secret keys are
    /// those known as it is made.
    func snapshot(of state: PreferencesSnapshot) -> PreferencesConfigSnapshot {
        PreferencesConfigSnapshot(
            providerName: providerName, values: state.values,
            secrets: secretKeys(besides: state), lookup: lookup)
    }
}

extension PreferencesProvider: ConfigProvider {
    /// The value stored for `key`, from the store's memory.
    ///
    /// - Throws: ``PreferencesProviderError`` when the stored value is not of `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        // One key by name, without copying the store's whole snapshot.
        try lookup.result(key, type: type, read: store.storedValue(forKey:), isSecret: isSecret)
    }

    /// Re-reads the backend and the published manifests, awaiting each
    /// read, then returns the value stored for `key`.
    ///
    /// - Throws: the backend's error when it cannot be read, or
    ///   ``PreferencesProviderError`` when the stored value is not of `type`.
    nonisolated(nonsending) public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType)
        async throws
        -> LookupResult
    {
        try await store.reload()
        await follower.refresh()
        return try value(forKey: key, type: type)
    }

    /// Calls `updatesHandler` with the value stored for `key` now, then
    /// each time it changes, until the handler returns.
    ///
    /// Changes come from the store's change feed: those made in this
    /// process before the write returns, those of other processes (another
    /// instance, `prefs set`, another etcd client) as soon as the store
    /// notices them. A change to other keys yields nothing; a slow consumer
    /// skips to the latest value. A stored value that is not of `type`
    /// yields ``PreferencesProviderError`` (and a warning in the log), and
    /// the store's file deleted yields no value; the watch goes on after
    /// either. Returning from `updatesHandler`, or cancelling its task,
    /// ends the subscription to the store's feed.
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        let logger = self.logger
        let updates = ValueUpdates(
            snapshots: store.changes(), key: key, type: type,
            snapshot: { [self] state in self.snapshot(of: state) },
            onMismatch: { error in
                // The error names the key and the types, never the value.
                logger.warning(
                    "\(error)",
                    metadata: [
                        "preferences.key": .string(key.description),
                        "preferences.type": .string("\(type)"),
                    ])
            })
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates))
    }

    /// The store's state now, read from memory.
    public func snapshot() -> any ConfigSnapshot {
        snapshot(of: store.snapshot)
    }

    /// Calls `updatesHandler` with the store's state now, then with each
    /// new state, in order, until the handler returns (or its task is
    /// cancelled). The store's file deleted yields a snapshot with no
    /// values; a slow consumer skips to the latest state.
    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>
            )
            async throws -> Return
    ) async throws -> Return {
        let states = store.changes()
        let updates = states.map { [self] state -> any ConfigSnapshot in self.snapshot(of: state) }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates))
    }
}

extension PreferencesProvider: CustomStringConvertible {
    /// The provider's name.
    public var description: String { providerName }
}
