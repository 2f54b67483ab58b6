import Preferences

/// The etcd backend's history archive (H7, <doc:EtcdGuarantees>): one etcd
/// key per entry beside the store's key, `KEY.history/` and the entry's
/// sequence in 20 digits, so that etcd lists them in order.
extension EtcdStorage {
    /// Entries under `KEY.history/`.
    public var historyArchive: (any HistoryArchive)? { EtcdHistoryArchive(storage: self) }

    /// The prefix of the archive's keys: `KEY.history/`.
    var historyPrefix: String { key + ".history/" }
}

/// Puts entries under their own keys in one transaction, and deletes those
/// older than the limit's number of entries in the same transaction.
///
/// The store appends entries only after committing them in its document,
/// and an entry's key holds the same text whoever appends it, so an append
/// that is repeated (after a lost answer, by two replicas) changes nothing.
/// The limit's bytes are applied when the history is read (every reader
/// keeps the newest entries within it); only its number of entries prunes
/// keys here.
struct EtcdHistoryArchive: HistoryArchive {
    let storage: EtcdStorage

    func key(_ sequence: Int64) -> String {
        let digits = String(sequence)
        return storage.historyPrefix + String(repeating: "0", count: max(0, 20 - digits.count))
            + digits
    }

    /// The first key after every key that starts with the prefix.
    var prefixEnd: String {
        var prefix = Array(storage.historyPrefix.utf8)
        prefix[prefix.count - 1] += 1
        return String(decoding: prefix, as: UTF8.self)
    }

    func readEntries() throws -> [[UInt8]] {
        let reply = try storage.client.call(
            "/v3/kv/range",
            [
                "key": EtcdClient.base64(storage.historyPrefix),
                "range_end": EtcdClient.base64(prefixEnd),
            ], operation: "read history", idempotent: true)
        return (reply["kvs"]?.arrayValue ?? []).map { EtcdClient.bytes($0["value"]) }
    }

    func append(_ entries: [(sequence: Int64, text: [UInt8])], keep: HistoryLimit) throws {
        guard let last = entries.last?.sequence else { return }
        let firstKept = last - Int64(keep.entries) + 1
        // etcd refuses a transaction that puts a key it also deletes: the
        // entries the limit drops at once are not put at all.
        var operations: [PreferenceValue] = entries.filter { $0.sequence >= firstKept }.map {
            [
                "request_put": [
                    "key": EtcdClient.base64(key($0.sequence)), "value": EtcdClient.base64($0.text),
                ]
            ]
        }
        if firstKept > 1 {
            operations.append([
                "request_delete_range": [
                    "key": EtcdClient.base64(key(0)),
                    "range_end": EtcdClient.base64(key(firstKept)),
                ]
            ])
        }
        _ = try storage.client.call(
            "/v3/kv/txn", ["success": .array(operations)], operation: "archive history",
            idempotent: true)
    }
}
