import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension EtcdConfiguration {
    /// How a store reaches `https://` endpoints: a transport from the
    /// `PreferencesEtcdTLS` library, which a service adds only when it uses
    /// `https`.
    ///
    /// `PreferencesEtcd` speaks plain `http` over a small client of its own
    /// and links no TLS: on Linux, TLS is `FoundationNetworking` and libcurl,
    /// about thirty more shared libraries loaded at every start. A service
    /// whose cluster is reached over `https` adds the `PreferencesEtcdTLS`
    /// product and passes its value:
    ///
    /// ```swift
    /// import PreferencesEtcd
    /// import PreferencesEtcdTLS
    ///
    /// let cluster = try EtcdConfiguration(
    ///     endpoints: "https://etcd-1:2379,https://etcd-2:2379",
    ///     credentials: .fromEnvironment(), tls: .systemTrustStore)
    /// ```
    ///
    /// Without it, an `https://` endpoint is refused with
    /// `PreferencesError.invalidValue(key:reason:)` naming the endpoint and
    /// this library: as the configuration is made from a comma-separated
    /// list, else when an ``EtcdStorage`` (or a store) is opened on it.
    /// `http://` endpoints always use the package's own client, with TLS or
    /// without.
    public struct TLS: Sendable, Equatable {
        /// What the transport verifies servers against, for equality and messages.
        package let name: String
        /// Makes the transport for a configuration's `https` endpoints.
        package let makeTransport: @Sendable (EtcdConfiguration) -> any EtcdTransport

        /// A TLS transport named `name` (the `PreferencesEtcdTLS` library's).
        package init(
            name: String,
            makeTransport: @escaping @Sendable (EtcdConfiguration) -> any EtcdTransport
        ) {
            self.name = name
            self.makeTransport = makeTransport
        }

        public static func == (lhs: TLS, rhs: TLS) -> Bool { lhs.name == rhs.name }
    }

    /// Refuses the first `https` endpoint when no ``tls`` reaches it.
    ///
    /// - Throws: `PreferencesError.invalidValue(key:reason:)` naming the
    ///   endpoint and the library that brings TLS.
    func checkTLS() throws {
        guard tls == nil, let endpoint = endpoints.first(where: Self.isHTTPS) else { return }
        throw PreferencesError.invalidValue(
            key: "etcd endpoints",
            reason:
                "'\(endpoint.absoluteString)' needs TLS, which the PreferencesEtcdTLS library brings: add it and pass tls: .systemTrustStore"
        )
    }

    /// Whether `endpoint` is an `https://` URL.
    package static func isHTTPS(_ endpoint: URL) -> Bool {
        endpoint.scheme?.lowercased() == "https"
    }
}
