import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where an etcd cluster answers and how to sign in to it.
///
/// ```swift
/// let cluster = try EtcdConfiguration(
///     endpoints: "http://etcd-1:2379,http://etcd-2:2379",
///     credentials: .fromEnvironment())
/// let store = try await PreferencesStore(etcd: cluster, suite: "com.example.app")
/// ```
///
/// `https://` endpoints also need ``tls``, from the `PreferencesEtcdTLS`
/// library (see ``TLS``).
public struct EtcdConfiguration: Sendable, Equatable {
    /// The members' client URLs (`http://host:2379`, `https://…` with
    /// ``tls``), tried in order.
    public var endpoints: [URL]
    /// The user to sign in as, or nil when the cluster does not use authentication.
    public var credentials: EtcdCredentials?
    /// How long a call may take, over all endpoints and retries, before it
    /// fails with `PreferencesError.io(operation:path:code:message:)` (5 s).
    public var timeout: TimeInterval
    /// The cluster's request size limit (`--max-request-bytes`, 1.5 MiB by default).
    public var maxRequestBytes: Int
    /// How `https://` endpoints are reached: `.systemTrustStore` from the
    /// `PreferencesEtcdTLS` library, or nil (the default) for a cluster
    /// reached over `http` only, which links no TLS. See ``TLS``.
    public var tls: TLS?

    /// How often a quiet watch checks that its member still answers and
    /// knows a leader (`/v3/maintenance/status`), and that the key holds no
    /// change the watch has not delivered (a keys-only read), 2 s. A member
    /// that stops answering without closing its connections (a stopped
    /// process, a machine gone, a partition) sends a watch nothing; after a
    /// failed check the watch resumes on another endpoint. A watch that
    /// stopped following resumes or is reported within two and a half of
    /// these plus twice ``timeout`` (<doc:EtcdGuarantees>): 15 s with the
    /// defaults. Each check is two small requests per quiet watching store:
    /// raise this for very large fleets, lower it (and ``timeout``) for a
    /// tighter bound.
    public var watchCheckInterval: TimeInterval = 2

    /// How long a process's registration as a replica outlives it
    /// (`<doc:RollingOutAChange>` in the Preferences documentation): the
    /// TTL of the lease its key is bound to, 10 s by default. An open store
    /// keeps the lease alive every third of it; one that ends without
    /// closing (killed, a machine gone) is no longer listed once it runs
    /// out. Each open store costs one small request per third.
    public var replicaTTL: TimeInterval = 10

    /// etcd's default request size limit: 1.5 MiB.
    public static let defaultMaxRequestBytes = 1_572_864

    /// A configuration for `endpoints`.
    ///
    /// An `https` endpoint without `tls` is refused when an ``EtcdStorage``
    /// is opened on the configuration (see ``TLS``).
    public init(
        endpoints: [URL], credentials: EtcdCredentials? = nil, timeout: TimeInterval = 5,
        maxRequestBytes: Int = EtcdConfiguration.defaultMaxRequestBytes, tls: TLS? = nil
    ) {
        self.endpoints = endpoints
        self.credentials = credentials
        self.timeout = timeout
        self.maxRequestBytes = maxRequestBytes
        self.tls = tls
    }

    /// A configuration for comma-separated endpoint URLs
    /// (`http://etcd-1:2379,http://etcd-2:2379`), read by
    /// `endpoints(parsing:)`.
    ///
    /// - Throws: `PreferencesError.invalidValue(key:reason:)` naming the
    ///   endpoint that is empty or not an `http` or `https` URL with a host,
    ///   or the first `https` one when there is no `tls` to reach it (see
    ///   ``TLS``).
    public init(
        endpoints list: String, credentials: EtcdCredentials? = nil, timeout: TimeInterval = 5,
        maxRequestBytes: Int = EtcdConfiguration.defaultMaxRequestBytes, tls: TLS? = nil
    ) throws {
        self.init(
            endpoints: try Self.endpoints(parsing: list), credentials: credentials,
            timeout: timeout, maxRequestBytes: maxRequestBytes, tls: tls)
        try checkTLS()
    }

    /// The endpoints of a comma-separated list, as `--etcd` and
    /// `$PREFS_ETCD_ENDPOINTS` give them: each element without the white
    /// space around it (spaces, tabs, line breaks), and each an `http://` or
    /// `https://` URL with a host. An empty element (a doubled or trailing
    /// comma, often a variable that was empty) is refused rather than
    /// skipped, and so is a list with no element at all.
    ///
    /// - Throws: `PreferencesError.invalidValue(key:reason:)` with the key
    ///   `etcd endpoints`, naming the element at fault.
    package static func endpoints(parsing list: String) throws -> [URL] {
        let elements = list.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0).trimmingWhitespace()
        }
        guard elements != [""] else {
            throw PreferencesError.invalidValue(
                key: "etcd endpoints", reason: "no endpoint given (comma-separated URLs)")
        }
        return try elements.enumerated().map { index, text in
            guard !text.isEmpty else {
                throw PreferencesError.invalidValue(
                    key: "etcd endpoints",
                    reason:
                        "endpoint \(index + 1) of \(elements.count) in '\(list)' is empty (a doubled or trailing comma)"
                )
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host?.isEmpty == false
            else {
                throw PreferencesError.invalidValue(
                    key: "etcd endpoints",
                    reason: "'\(text)' is not an http:// or https:// URL with a host")
            }
            return url
        }
    }

    /// The endpoints as given, comma-separated.
    public var endpointList: String {
        endpoints.map { $0.absoluteString }.joined(separator: ",")
    }
}

/// An etcd user name and password, exchanged for a token at
/// `/v3/auth/authenticate`. The password never comes from the command line.
public struct EtcdCredentials: Sendable, Equatable {
    /// The etcd user.
    public var user: String
    /// The user's password.
    public var password: String

    /// Credentials for `user`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// `$PREFS_ETCD_USER` with `$PREFS_ETCD_PASSWORD`, or with the first line
    /// of `passwordFile` (which wins over the variable); nil without a user.
    ///
    /// - Throws: `PreferencesError.io(operation:path:code:message:)` when
    ///   the password file cannot be read, and
    ///   `PreferencesError.invalidValue(key:reason:)` when a user is set
    ///   without any password.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        passwordFile: String? = nil
    ) throws -> EtcdCredentials? {
        guard let user = environment["PREFS_ETCD_USER"], !user.isEmpty else {
            if let passwordFile {
                throw PreferencesError.invalidValue(
                    key: "PREFS_ETCD_USER",
                    reason:
                        "a password file (\(passwordFile)) needs the user name in $PREFS_ETCD_USER")
            }
            return nil
        }
        if let passwordFile {
            let data: [UInt8]
            do {
                data = try readWholeFile(passwordFile)
            } catch PreferencesError.io(_, _, let code, let message) {
                throw PreferencesError.io(
                    operation: "read the etcd password file", path: passwordFile, code: code,
                    message: message)
            }
            let text = String(decoding: data, as: UTF8.self)
            // Any line break ends the line: "\r\n" is one Character, never "\n".
            let line =
                text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first
                ?? ""
            return EtcdCredentials(user: user, password: String(line))
        }
        guard let password = environment["PREFS_ETCD_PASSWORD"] else {
            throw PreferencesError.invalidValue(
                key: "PREFS_ETCD_USER",
                reason:
                    "user '\(user)' needs a password: set $PREFS_ETCD_PASSWORD or give a password file"
            )
        }
        return EtcdCredentials(user: user, password: password)
    }
}
