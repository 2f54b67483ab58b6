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
/// older than the limit's number of entries in the same transaction. The
/// key of sequence 0, `KEY.history/00000000000000000000`, names the history
/// the archive belongs to; an archive of another history is copied to
/// `KEY.history.<UTC stamp>/` and then removed, before the first append of
/// the new one.
///
/// The store appends entries only after committing them in its document,
/// and an entry's key holds the same text whoever appends it, so an append
/// that is repeated (after a lost answer, by two replicas) changes nothing.
/// The limit's bytes are applied when the history is read (every reader
/// keeps the newest entries within it); only its number of entries prunes
/// keys here.
struct EtcdHistoryArchive: HistoryArchive {
    let storage: EtcdStorage

    /// How many keys one transaction puts when an archive is set aside:
    /// etcd refuses more than 128 operations in one (`--max-txn-ops`).
    static let keysPerTransaction = 100

    var location: String { storage.historyPrefix }

    func key(_ sequence: Int64, prefix: String? = nil) -> String {
        let digits = String(sequence)
        return (prefix ?? storage.historyPrefix)
            + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// The keys and values from `start` up to the end of the archive.
    private func range(from start: String, operation: String) throws -> [(
        key: String, value: [UInt8]
    )] {
        let reply = try storage.client.call(
            "/v3/kv/range",
            [
                "key": EtcdClient.base64(start),
                "range_end": EtcdClient.base64(EtcdStorage.prefixEnd(storage.historyPrefix)),
            ], operation: operation, idempotent: true)
        return (reply["kvs"]?.arrayValue ?? []).map {
            (
                String(decoding: EtcdClient.bytes($0["key"]), as: UTF8.self),
                EtcdClient.bytes($0["value"])
            )
        }
    }

    func read() throws -> ArchivedHistory {
        let identity = key(0)
        var archived = ArchivedHistory(id: nil, entries: [])
        for (name, value) in try range(from: identity, operation: "read history") {
            if name == identity {
                archived.id = ArchivedHistory.id(inIdentityText: value)
            } else {
                archived.entries.append(value)
            }
        }
        return archived
    }

    func append(
        _ entries: [(sequence: Int64, text: [UInt8])], history id: String, keep: HistoryLimit
    ) throws -> String? {
        guard let first = entries.first?.sequence, let last = entries.last?.sequence else {
            return nil
        }
        // Only the entries from the first appended on can contradict them.
        let identity = key(0)
        var archived = ArchivedHistory(
            id: nil, entries: try range(from: key(first), operation: "read history").map(\.value))
        let head = try range(from: identity, operation: "read history").first
        if head?.key == identity { archived.id = ArchivedHistory.id(inIdentityText: head!.value) }
        let share = archived.share(of: id, through: last, carrying: entries)
        let place = share == .all ? nil : try setAside(keeping: share)
        let firstKept = last - Int64(keep.entries) + 1
        // etcd refuses a transaction that puts a key it also deletes: the
        // entries the limit drops at once are not put at all.
        var operations: [PreferenceValue] = [
            [
                "request_put": [
                    "key": EtcdClient.base64(identity),
                    "value": EtcdClient.base64(ArchivedHistory.identityText(id)),
                ]
            ]
        ]
        operations += entries.filter { $0.sequence >= firstKept }.map {
            [
                "request_put": [
                    "key": EtcdClient.base64(key($0.sequence)), "value": EtcdClient.base64($0.text),
                ]
            ]
        }
        if firstKept > 1 {
            operations.append([
                "request_delete_range": [
                    "key": EtcdClient.base64(key(1)),
                    "range_end": EtcdClient.base64(key(firstKept)),
                ]
            ])
        }
        _ = try storage.client.call(
            "/v3/kv/txn", ["success": .array(operations)], operation: "archive history",
            idempotent: true)
        return place
    }

    /// Copies the whole archive to `KEY.history.<stamp>/` (a free one),
    /// then removes it, or only its entries after those it shares; returns
    /// the copy's prefix. Interrupted, it leaves the archive in place, and
    /// perhaps a partial copy beside it.
    private func setAside(keeping share: ArchivedHistory.Share) throws -> String {
        let stamp = ISO8601.compactStamp()
        var place = storage.key + ".history." + stamp + "/"
        var attempt = 1
        while try storage.client.call(
            "/v3/kv/range",
            [
                "key": EtcdClient.base64(place),
                "range_end": EtcdClient.base64(EtcdStorage.prefixEnd(place)),
                "count_only": true,
            ], operation: "set history aside", idempotent: true)["count"] != nil
        {
            attempt += 1
            place = storage.key + ".history." + stamp + "-\(attempt)/"
        }
        let all = try range(from: key(0), operation: "set history aside")
        var start = 0
        while start < all.count {
            let batch = all[start..<min(all.count, start + Self.keysPerTransaction)]
            let puts: [PreferenceValue] = batch.map {
                [
                    "request_put": [
                        "key": EtcdClient.base64(
                            place + $0.key.dropFirst(storage.historyPrefix.count)),
                        "value": EtcdClient.base64($0.value),
                    ]
                ]
            }
            _ = try storage.client.call(
                "/v3/kv/txn", ["success": .array(puts)], operation: "set history aside",
                idempotent: true)
            start += Self.keysPerTransaction
        }
        let from: Int64 = if case .through(let last) = share { last + 1 } else { 0 }
        let removal: PreferenceValue = [
            "request_delete_range": [
                "key": EtcdClient.base64(key(from)),
                "range_end": EtcdClient.base64(EtcdStorage.prefixEnd(storage.historyPrefix)),
            ]
        ]
        _ = try storage.client.call(
            "/v3/kv/txn", ["success": [removal]], operation: "set history aside",
            idempotent: true)
        return place
    }
}
