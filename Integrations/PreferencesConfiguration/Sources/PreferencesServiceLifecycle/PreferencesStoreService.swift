import Logging
import Preferences
import ServiceLifecycle

/// A swift-service-lifecycle `Service` that owns a ``Preferences/PreferencesStore``:
/// it runs until the service group shuts down gracefully (SIGTERM, say) or
/// its task is cancelled, then closes the store
/// (``Preferences/PreferencesStore/close()``), so that the process stops
/// being a replica the moment it stops: `prefs replicas` no longer lists
/// it, and a `prefs set --wait` running then counts it gone rather than
/// waiting for it (on etcd, rather than until its lease runs out).
///
/// Put it first in the group, before the services that read the store: a
/// `ServiceGroup` shuts its services down in the reverse of their order,
/// so the store closes after the last of its readers has stopped, and no
/// reader meets a closed store.
///
/// ```swift
/// let store = try await PreferencesStore(suite: "com.example.service")
/// let group = ServiceGroup(
///     services: [PreferencesStoreService(store: store, logger: logger), worker],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger)
/// try await group.run()
/// ```
///
/// It lives in a library of its own, `PreferencesServiceLifecycle`, not in
/// `PreferencesConfiguration`: closing a store has nothing to do with
/// swift-configuration, so a service that runs a store in a `ServiceGroup`
/// without reading it through `ConfigReader` links no configuration
/// reader, and one that reads it through `ConfigReader` without a
/// `ServiceGroup` links no swift-service-lifecycle (swift-configuration
/// makes its own `Service` opt-in the same way, with its `Reloading`
/// trait). The `Preferences` library itself keeps no dependencies.
public struct PreferencesStoreService: Service, CustomStringConvertible {
    /// The store the service closes when it stops.
    public let store: PreferencesStore

    private let logger: Logger

    /// A service that closes `store` when it stops, and says so to `logger`
    /// (by default the process's logging system, under the label
    /// `PreferencesStoreService`) at info level, with the store's file path
    /// or etcd key as `preferences.location`.
    public init(
        store: PreferencesStore, logger: Logger = Logger(label: "PreferencesStoreService")
    ) {
        self.store = store
        var logger = logger
        logger[metadataKey: "preferences.location"] = .string(store.location)
        self.logger = logger
    }

    /// "PreferencesStoreService[LOCATION]": how the service group names it
    /// in its logs and errors.
    public var description: String { "PreferencesStoreService[\(store.location)]" }

    /// Waits for the group's graceful shutdown, or for cancellation, then
    /// closes the store and returns once it is closed: its change feeds
    /// have ended, the writes it started are durable and its replica
    /// registration is gone.
    ///
    /// - Throws: `CancellationError` when it ended because its task was
    ///   cancelled (after closing the store all the same).
    public func run() async throws {
        var cancelled = false
        do {
            try await gracefulShutdown()
        } catch {
            cancelled = true
        }
        await store.close()
        logger.info("closed the store")
        if cancelled { throw CancellationError() }
    }
}
