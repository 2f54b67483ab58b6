import PreferencesEtcd

extension EtcdConfiguration.TLS {
    /// `https://` endpoints through Foundation's `URLSession`, each server
    /// verified against the system's trust store (E5 in the PreferencesEtcd
    /// documentation, EtcdGuarantees).
    ///
    /// On Linux this links `FoundationNetworking` and libcurl into the
    /// program, which is why it is a library of its own: only a service that
    /// uses `https` pays for it. A private certificate authority goes into
    /// the system's store (on Debian, `/usr/local/share/ca-certificates/`
    /// and `update-ca-certificates`).
    ///
    /// ```swift
    /// let cluster = try EtcdConfiguration(
    ///     endpoints: "https://etcd-1:2379,https://etcd-2:2379",
    ///     credentials: .fromEnvironment(), tls: .systemTrustStore)
    /// let store = try await PreferencesStore(etcd: cluster, suite: "com.example.app")
    /// ```
    public static var systemTrustStore: Self {
        Self(name: "the system's trust store") { configuration in
            URLSessionTransport(timeout: configuration.timeout)
        }
    }
}
