import Preferences

extension PreferencesStore {
    /// Opens the store kept under `key` in an etcd cluster
    /// (E1–E8, <doc:EtcdGuarantees>).
    ///
    /// Every replica that opens the same key shares one set of settings:
    /// a write is acknowledged by the cluster's quorum and reaches the other
    /// replicas' change feeds through etcd's watch. A typed record shares
    /// it with `store.record(AppSettings.self)`.
    ///
    /// ```swift
    /// let cluster = try EtcdConfiguration(
    ///     endpoints: "http://etcd-1:2379,http://etcd-2:2379,http://etcd-3:2379",
    ///     credentials: .fromEnvironment())
    /// let store = try await PreferencesStore(etcd: cluster, key: "/prefs/com.example.app")
    /// ```
    public convenience init(
        etcd configuration: EtcdConfiguration, key: String,
        migrations: [any PreferencesMigration] = [], corruption: CorruptionPolicy = .fail,
        limits: PreferencesLimits = PreferencesLimits(), liveReads: Bool = true
    ) async throws {
        try await self.init(
            storage: EtcdStorage(configuration: configuration, key: key), migrations: migrations,
            corruption: corruption, limits: limits, liveReads: liveReads)
    }

    /// Opens the named suite's store in etcd, under the key `/prefs/NAME`.
    public convenience init(
        etcd configuration: EtcdConfiguration, suite: String,
        migrations: [any PreferencesMigration] = [], corruption: CorruptionPolicy = .fail,
        limits: PreferencesLimits = PreferencesLimits(), liveReads: Bool = true
    ) async throws {
        try await self.init(
            etcd: configuration, key: EtcdStorage.key(forSuite: suite), migrations: migrations,
            corruption: corruption, limits: limits, liveReads: liveReads)
    }
}
