import Foundation
import PreferencesTestSupport
import Testing

/// One key as etcd holds it, read with `etcdctl`, never through the store:
/// its value's bytes and the revision that last changed it.
struct EtcdKeyValue: Equatable {
    let key: String
    let value: Data
    let modRevision: Int64

    /// The value as text.
    var text: String { String(decoding: value, as: UTF8.self) }
}

extension EtcdCluster {
    /// What etcd holds at `key`, or with `prefix` under every key that
    /// starts with it, in key order: `etcdctl get -w json`, which must succeed.
    func keyValues(_ key: String, prefix: Bool = false) async throws -> [EtcdKeyValue] {
        let arguments = ["get", key, "-w", "json"] + (prefix ? ["--prefix"] : [])
        let output = try await offPool { try self.etcdctlChecked(arguments) }
        let reply = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
        let pairs = try #require(reply as? [String: Any], "\(output.standardOutput)")["kvs"]
        return try ((pairs as? [[String: Any]]) ?? []).map { pair in
            func decoded(_ name: String) throws -> Data {
                try #require(
                    (pair[name] as? String).flatMap { Data(base64Encoded: $0) },
                    "no \(name) in \(pair)")
            }
            let revision = try #require(pair["mod_revision"] as? NSNumber, "\(pair)")
            return EtcdKeyValue(
                key: String(decoding: try decoded("key"), as: UTF8.self),
                value: try decoded("value"), modRevision: revision.int64Value)
        }
    }

    /// The store's document at `key`: its bytes and `mod_revision`.
    func document(_ key: String) async throws -> EtcdKeyValue {
        let found = try await keyValues(key)
        return try #require(found.first, "etcd holds nothing at \(key)")
    }
}
