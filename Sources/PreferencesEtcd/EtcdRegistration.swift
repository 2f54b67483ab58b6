import Dispatch
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A replica's key bound to a lease (F2, `<doc:RollingOutAChange>` in the
/// Preferences documentation): granted at registration, kept alive every
/// third of ``EtcdConfiguration/replicaTTL`` (one `lease/keepalive`
/// request, which answers once and closes), revoked at close, which
/// deletes the key at once. A lease found expired (the process was
/// stopped longer than the TTL) is granted again and the key put again.
final class EtcdRegistration: ReplicaRegistration, @unchecked Sendable {
    private let storage: EtcdStorage
    private let key: String
    private let queue = DispatchQueue(label: "preferences.etcd.replica")
    // Touched only on `queue`.
    /// The lease's id, as etcd wrote it.
    private var lease: PreferenceValue?
    private var replica: PreferencesReplica?
    private var timer: (any DispatchSourceTimer)?
    private var closed = false

    init(storage: EtcdStorage, key: String) {
        self.storage = storage
        self.key = key
    }

    var ttl: TimeInterval { storage.configuration.replicaTTL }

    func start(_ replica: PreferencesReplica) throws {
        try queue.sync {
            self.replica = replica
            try grantAndPut()
            let interval = DispatchTimeInterval.milliseconds(max(100, Int(ttl * 1_000 / 3)))
            timer = queue.repeatingTimer(every: interval) { [weak self] in self?.keepAlive() }
            timer?.resume()
        }
    }

    private func grantAndPut() throws {
        // Safe to send again to another member when a connection closes
        // mid-request: a lease granted twice leaves one that nothing uses,
        // which runs out after its TTL.
        let reply = try storage.client.call(
            "/v3/lease/grant", ["TTL": .string(String(Int(max(1, ttl.rounded(.up)))))],
            operation: "grant lease", idempotent: true)
        guard let id = reply["ID"] else {
            throw PreferencesError.io(
                operation: "grant lease", path: key, code: EIO, message: "no lease id in the reply")
        }
        lease = id
        try put()
    }

    private func put() throws {
        guard let replica, let lease else { return }
        _ = try storage.client.call(
            "/v3/kv/put",
            [
                "key": EtcdClient.base64(key),
                "value": EtcdClient.base64(Array(replica.jsonText.utf8)), "lease": lease,
            ], operation: "register replica", idempotent: true)
    }

    private func keepAlive() {
        guard !closed, let lease else { return }
        let reply = try? storage.client.call(
            "/v3/lease/keepalive", ["ID": lease], operation: "keep lease alive", idempotent: true)
        let left = EtcdClient.int64((reply?["result"] ?? reply)?["TTL"])
        // An expired lease answers with no TTL: register again.
        if reply != nil && left <= 0 { try? grantAndPut() }
    }

    func update(_ replica: PreferencesReplica) throws {
        try queue.sync {
            guard !closed else { return }
            self.replica = replica
            try put()
        }
    }

    /// Revokes the lease on the registration's own queue, without waiting:
    /// a process that ends first leaves the lease to run out.
    func close() {
        queue.async { [self] in revoke() }
    }

    /// Revokes the lease, and with it the registration, before returning.
    func closeAndWait() {
        queue.sync { revoke() }
    }

    /// On the queue.
    private func revoke() {
        guard !closed else { return }
        closed = true
        timer?.cancel()
        if let lease {
            _ = try? storage.client.call(
                "/v3/lease/revoke", ["ID": lease], operation: "revoke lease", idempotent: true)
        }
    }

    deinit { timer?.cancel() }
}
