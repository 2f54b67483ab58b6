import Configuration
import Preferences
import Synchronization

/// A swift-configuration provider that reads a ``Preferences/PreferencesStore``:
/// durable settings, changed by the service itself, by another process or
/// by an operator's `prefs set`, seen by `ConfigReader`'s `watch` methods
/// as soon as the store sees them.
///
/// The provider reads the store it is given, on any backend (a file, memory,
/// or etcd):
/// - ``value(forKey:type:)`` and ``snapshot()`` read the store's memory:
///   synchronous, with no I/O;
/// - ``fetchValue(forKey:type:)`` re-reads the backend first, so it returns
///   the latest value even where a change has not reached this process yet;
/// - ``watchValue(forKey:type:updatesHandler:)`` and
///   ``watchSnapshot(updatesHandler:)`` follow the store's change feeds: the
///   current value first, then each change, whichever process made it.
///
/// A key's components joined with ``separator`` name the stored key
/// (`http.port` reads the key `http.port`). When no such key is stored, a
/// key also reaches into a stored JSON object, such as a record's field:
/// `window.width` reads the field `width` of the object stored under
/// `window`. Only stored values count: a store's registered defaults do not
/// hide the providers after this one.
///
/// Values keep their JSON types: `string`, `int`, `double` and `bool` read
/// the stored scalar (an integer reads as a `double` too, and a number with
/// no fractional part as an `int`), `bytes` reads a `Data` value's base64
/// text, and the array types read JSON arrays of those. Any other stored
/// value fails with ``PreferencesProviderError``, which reads as
/// swift-configuration's own providers' conversion error. A key that the
/// store's manifests or its file declare secret comes out with
/// `isSecret: true`, so access logs redact it.
///
/// The provider only reads; change values through ``store``, or with
/// `prefs set` from a shell:
///
/// ```swift
/// let store = try await PreferencesStore(suite: "com.example.service")
/// let config = ConfigReader(providers: [
///     PreferencesProvider(store: store),
///     EnvironmentVariablesProvider(),
/// ])
/// let port = config.int(forKey: "http.port", default: 8080)
/// try await config.watchInt(forKey: "http.workers", default: 4) { updates in
///     for await workers in updates { pool.resize(to: workers) }
/// }
/// ```
public final class PreferencesProvider: Sendable {
    /// The store the provider reads; write through it to change what the
    /// provider returns.
    public let store: PreferencesStore

    /// What joins a key's components into a stored key's name ("." by default).
    public let separator: String

    /// "PreferencesProvider[LOCATION]", where LOCATION is the store's file
    /// path or etcd address.
    public let providerName: String

    /// The secret keys that the manifests published beside the store
    /// declare, with those given to the initializer.
    private let declaredSecrets: Mutex<Set<String>>

    /// Keys given to the initializer as secret.
    private let givenSecrets: Set<String>

    private let lookup: KeyLookup

    /// A provider over `store`.
    ///
    /// The initializer reads the key manifests published beside the store
    /// once to learn which keys are secret (``fetchValue(forKey:type:)``
    /// reads them again); the keys that this process declares secret, and
    /// those the store lists as secret, are followed with every change.
    ///
    /// - Parameters:
    ///   - store: the store to read, on any backend.
    ///   - separator: what joins a key's components into a stored key's name.
    ///   - secretKeys: stored keys to treat as secret besides those the
    ///     store's manifests and file declare (for a store whose backend
    ///     publishes no manifests, such as memory).
    public init(store: PreferencesStore, separator: String = ".", secretKeys: Set<String> = []) {
        self.store = store
        self.separator = separator
        self.providerName = "PreferencesProvider[\(store.location)]"
        self.givenSecrets = secretKeys
        self.lookup = KeyLookup(separator: separator)
        self.declaredSecrets = Mutex(
            secretKeys.union(Self.manifestSecrets(of: store.storage) ?? []))
    }

    /// The keys that the manifests published beside the store declare
    /// secret, or nil when they cannot be read. A manifest that does not
    /// parse declares nothing.
    private static func manifestSecrets(of storage: any PreferencesStorage) -> Set<String>? {
        guard let published = try? storage.manifests?.programManifests() ?? [:] else { return nil }
        var secrets: Set<String> = []
        for (program, bytes) in published {
            guard
                let manifest = try? PreferencesManifest(
                    jsonText: String(decoding: bytes, as: UTF8.self), source: program)
            else { continue }
            for (key, entry) in manifest.entries where entry.secret {
                secrets.insert(key)
            }
        }
        return secrets
    }

    /// Reads the published manifests again; keeps what was known when they
    /// cannot be read.
    private func refreshDeclaredSecrets() {
        guard let secrets = Self.manifestSecrets(of: store.storage) else { return }
        let all = secrets.union(givenSecrets)
        declaredSecrets.withLock { $0 = all }
    }

    /// Whether `name` is secret by this process's declarations, the
    /// manifests or the initializer (a snapshot adds the keys it lists).
    func isDeclaredSecret(_ name: String) -> Bool {
        store.isSecret(name) || declaredSecrets.withLock { $0.contains(name) }
    }

    /// `state` as a configuration snapshot.
    func snapshot(of state: PreferencesSnapshot) -> PreferencesConfigSnapshot {
        PreferencesConfigSnapshot(
            providerName: providerName, values: state.values, storedSecrets: state.secretKeys,
            isDeclaredSecret: { [self] in self.isDeclaredSecret($0) }, lookup: lookup)
    }
}

extension PreferencesProvider: ConfigProvider {
    /// The value stored for `key`, from the store's memory.
    ///
    /// - Throws: ``PreferencesProviderError`` when the stored value is not of `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        // One key by name, without copying the store's whole snapshot.
        try lookup.result(
            key, type: type, read: store.storedValue(forKey:), isSecret: isDeclaredSecret)
    }

    /// Re-reads the backend (and the published manifests), then returns
    /// the value stored for `key`.
    ///
    /// - Throws: the backend's error when it cannot be read, or
    ///   ``PreferencesProviderError`` when the stored value is not of `type`.
    nonisolated(nonsending) public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType)
        async throws
        -> LookupResult
    {
        try await store.reload()
        refreshDeclaredSecrets()
        return try value(forKey: key, type: type)
    }

    /// Calls `updatesHandler` with the value stored for `key` now, then
    /// each time it changes, until the handler returns.
    ///
    /// Changes come from the store's change feed: those made in this
    /// process before the write returns, those of other processes (another
    /// instance, `prefs set`, another etcd client) as soon as the store
    /// notices them. A change to other keys yields nothing; a slow consumer
    /// skips to the latest value.
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        let updates = ValueUpdates(
            snapshots: store.changes(), key: key, type: type,
            snapshot: { [self] state in self.snapshot(of: state) })
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates))
    }

    /// The store's state now, read from memory.
    public func snapshot() -> any ConfigSnapshot {
        snapshot(of: store.snapshot)
    }

    /// Calls `updatesHandler` with the store's state now, then with each
    /// new state, until the handler returns.
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
