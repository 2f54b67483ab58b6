import Dispatch
import Preferences

/// Every program's manifest and the replicas, under the store's key (F1,
/// F2, `<doc:RollingOutAChange>` in the Preferences documentation):
///
/// - `KEY/manifests/PROGRAM`: each program's manifest, kept after it exits;
/// - `KEY/manifest-versions/DIGEST`: each version of them, by digest;
/// - `KEY/replicas/HOST-PID`: one registration per process with the store
///   open, bound to a lease of ``EtcdConfiguration/replicaTTL`` that the
///   process keeps alive and revokes when it closes the store.
extension EtcdStorage {
    /// `KEY/manifests/` and `KEY/manifest-versions/`.
    public var manifests: (any ManifestPublishing)? { EtcdManifests(storage: self) }

    /// `KEY/replicas/`.
    public var replicas: (any ReplicaRegistry)? { EtcdReplicas(storage: self) }

    var manifestsPrefix: String { key + "/manifests/" }
    var manifestVersionsPrefix: String { key + "/manifest-versions/" }
    var replicasPrefix: String { key + "/replicas/" }

    static func prefixEnd(_ prefix: String) -> String {
        var bytes = Array(prefix.utf8)
        bytes[bytes.count - 1] += 1
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The values of every key under `prefix`, by the rest of their name.
    func values(under prefix: String, operation: String) throws -> [String: [UInt8]] {
        let reply = try client.call(
            "/v3/kv/range",
            [
                "key": EtcdClient.base64(prefix),
                "range_end": EtcdClient.base64(Self.prefixEnd(prefix)),
            ], operation: operation, idempotent: true)
        var values: [String: [UInt8]] = [:]
        for pair in reply["kvs"]?.arrayValue ?? [] {
            let name = String(decoding: EtcdClient.bytes(pair["key"]), as: UTF8.self)
            values[String(name.dropFirst(prefix.count))] = EtcdClient.bytes(pair["value"])
        }
        return values
    }

    func value(of key: String, operation: String) throws -> [UInt8]? {
        let reply = try client.call(
            "/v3/kv/range", ["key": EtcdClient.base64(key)], operation: operation,
            idempotent: true)
        return reply["kvs"]?.arrayValue?.first.map { EtcdClient.bytes($0["value"]) }
    }
}

/// Programs' manifests under `KEY/manifests/` and `KEY/manifest-versions/`;
/// etcd keeps no store manifest of its own.
struct EtcdManifests: ManifestPublishing {
    let storage: EtcdStorage

    /// Puts `bytes` under `KEY/manifests/PROGRAM` and
    /// `KEY/manifest-versions/DIGEST`, each only when it differs.
    func publish(_ bytes: [UInt8], program: String) throws {
        let digest = PreferencesManifest.digest(of: bytes)
        for place in [
            storage.manifestsPrefix + program, storage.manifestVersionsPrefix + digest,
        ] {
            if try storage.value(of: place, operation: "read manifest") == bytes { continue }
            _ = try storage.client.call(
                "/v3/kv/put",
                ["key": EtcdClient.base64(place), "value": EtcdClient.base64(bytes)],
                operation: "publish manifest", idempotent: true)
        }
    }

    /// None: etcd keeps every program's manifest, and no store manifest.
    func storeManifest() throws -> (bytes: [UInt8], location: String)? { nil }

    /// Every program's manifest, by program.
    func programManifests() throws -> [String: [UInt8]] {
        try storage.values(under: storage.manifestsPrefix, operation: "read manifests")
    }

    /// The manifest kept with `digest`.
    func manifest(digest: String) throws -> [UInt8]? {
        guard !digest.isEmpty else { return nil }
        return try storage.value(
            of: storage.manifestVersionsPrefix + digest, operation: "read manifest")
    }
}

/// Registrations under `KEY/replicas/HOST-PID`, each bound to a lease.
struct EtcdReplicas: ReplicaRegistry {
    let storage: EtcdStorage

    /// Grants a lease of ``EtcdConfiguration/replicaTTL``, puts the
    /// registration bound to it, and keeps it alive every third of the TTL.
    func register(_ replica: PreferencesReplica) throws -> (any ReplicaRegistration)? {
        let place = storage.replicasPrefix + "\(replica.host)-\(replica.pid)"
        let registration = EtcdRegistration(storage: storage, key: place)
        try registration.start(replica)
        return registration
    }

    /// The registrations under `KEY/replicas/`, sorted by host and pid.
    func list() throws -> [PreferencesReplica] {
        try storage.values(under: storage.replicasPrefix, operation: "read replicas").values
            .compactMap { PreferencesReplica(jsonBytes: $0) }
            .sorted { ($0.host, $0.pid) < ($1.host, $1.pid) }
    }

    /// Watches `KEY/replicas/`: every put and delete (an expired lease
    /// included) calls `onChange`.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
        let watch = EtcdPrefixWatch(
            storage: storage, prefix: storage.replicasPrefix, onChange: onChange)
        watch.start()
        return watch
    }
}
