import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// Temporary changes on etcd (A4 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md): the
/// document holds the earlier value and the temporary one beside it with
/// its end; every open store, each on its own clock, delivers the end to
/// its feeds when it comes, with no write to etcd at that moment. These
/// tests wait for time to pass: the end is the clock, not an event (its
/// delivery by a feed is awaited as one).
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 5))
struct EtcdTemporaryTests {
    /// The store's document as etcd holds it, read with a raw range
    /// request, not through the store: its bytes and `mod_revision`.
    func document(_ cluster: EtcdCluster, _ key: String) async throws -> (
        bytes: [UInt8], modRevision: Int64
    ) {
        let read = try await offPool { () -> (bytes: [UInt8], modRevision: Int64)? in
            let reply = try cluster.post(0, "/v3/kv/range", ["key": EtcdClient.base64(key)])
            guard reply.status == 200, let pair = reply.json["kvs"]?.arrayValue?.first
            else { return nil }
            return (EtcdClient.bytes(pair["value"]), EtcdClient.int64(pair["mod_revision"]))
        }
        return try #require(read, "etcd holds nothing at \(key)")
    }

    @Test func aFeedDeliversTheEndOfATemporaryValueWithNoWriteToEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("temporary")
        let store = try await PreferencesStore(storage: cluster.storage(key))
        try await store.set(.language, "fr")
        var feed = store.changes(.language).makeAsyncIterator()
        #expect(try await feed.next(within: .seconds(20), "the current value") == "fr")
        // Another replica of the service, sharing nothing with this store.
        let replica = try await PreferencesStore(storage: cluster.storage(key, sharesState: false))
        var replicaFeed = replica.changes(.language).makeAsyncIterator()
        #expect(try await replicaFeed.next(within: .seconds(20), "the replica's value") == "fr")

        // Long enough that even a loaded run reads it before it ends (with
        // the whole suite on two cores, a task has waited more than 20 s to
        // run again).
        try await store.set(.language, "de", for: .seconds(60))
        #expect(store[.language] == "de")
        #expect(try await feed.next(within: .seconds(20), "the temporary value") == "de")
        let end = try #require(store.snapshot.temporaryValueEnd(forKey: "language"))
        #expect(end.timeIntervalSinceNow > 0 && end.timeIntervalSinceNow <= 60)
        #expect(
            try await replicaFeed.next(within: .seconds(20), "the replica's temporary value")
                == "de")
        #expect(replica.snapshot.temporaryValueEnd(forKey: "language") == end)

        // etcd keeps the earlier value, and the temporary one beside it.
        let written = try await document(cluster, key)
        let text = String(decoding: written.bytes, as: UTF8.self)
        guard case .object(let members) = try TestJSON.parse(text),
            case .object(let values)? = members["values"],
            case .object(let temporary)? = members["temporary"],
            case .object(let language)? = temporary["language"]
        else {
            Issue.record("not a document with a temporary value: \(text)")
            return
        }
        #expect(values["language"] == "fr")
        #expect(language["value"] == "de")
        let sequence = store.snapshot.sequence

        // The end reaches both feeds when it comes (how late is printed, not
        // asserted: a timing, which a loaded run stretches).
        #expect(try await feed.next(within: .seconds(90), "the end of the temporary value") == "fr")
        let late = -end.timeIntervalSinceNow
        #expect(late >= 0, "delivered \(-late) s before the end")
        print("temporary value on etcd: the end reached the feed \(Int(late * 1000)) ms after it")
        #expect(
            try await replicaFeed.next(within: .seconds(90), "the end on the replica") == "fr")
        let replicaLate = -end.timeIntervalSinceNow
        #expect(replicaLate >= 0, "delivered \(-replicaLate) s before the end on the replica")
        print(
            "temporary value on etcd: the end reached the replica's feed "
                + "\(Int(replicaLate * 1000)) ms after it")
        for reader in [store, replica] {
            #expect(reader[.language] == "fr")
            #expect(reader.snapshot.temporaryValueEnd(forKey: "language") == nil)
            #expect(reader.snapshot.sequence == sequence)
        }

        // Nothing was written at that moment: the same bytes, the same revision.
        let after = try await document(cluster, key)
        #expect(after.bytes == written.bytes)
        #expect(after.modRevision == written.modRevision)
        // A store opened after the end reads the earlier value at once.
        let fresh = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false)
        #expect(fresh[.language] == "fr")
        #expect(fresh.snapshot.sequence == sequence)
        let entry = try #require(try await fresh.history().entries.last)
        #expect(entry.cause?.hasPrefix("temporary until ") == true)
        #expect(entry.changes["language"] == .init(old: "fr", new: "de"))
    }
}
