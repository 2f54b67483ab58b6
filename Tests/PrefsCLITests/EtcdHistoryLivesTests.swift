import Foundation
import Preferences
import PreferencesTestSupport
import Testing

/// One history per life of a store in etcd: its key deleted with `etcdctl`
/// and written again, reset after corruption, or given an older copy of
/// its document. The earlier archive (`KEY.history/`) is never read as the
/// new life's; it is copied aside whole to `KEY.history.<stamp>/`, and
/// `prefs log` says where. What etcd holds is read with `etcdctl`.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 5))
struct EtcdHistoryLivesTests {
    func open(_ cluster: EtcdCluster, _ key: String, corruption: CorruptionPolicy = .fail)
        async throws -> PreferencesStore
    {
        try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), corruption: corruption,
            liveReads: false)
    }

    /// 40 changes of `old_counter`: the archive holds #1–#32 and its name.
    func earlierLife(_ cluster: EtcdCluster, _ key: String) async throws {
        let store = try await open(cluster, key)
        for value in 1...40 {
            try await store.set(PreferenceKey<Int>("old_counter", default: 0), value)
        }
        let archived = try await cluster.keyValues(key + ".history/", prefix: true)
        #expect(archived.count == 33, "\(archived.map(\.key))")
    }

    /// The prefixes of the archives set aside beside `key`.
    func setAside(_ cluster: EtcdCluster, _ key: String) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for pair in try await cluster.keyValues(key + ".history.", prefix: true) {
            let rest = pair.key.dropFirst(key.count + ".history.".count)
            let stamp = try #require(rest.split(separator: "/").first, "\(pair.key)")
            counts[key + ".history." + stamp + "/", default: 0] += 1
        }
        return counts
    }

    @Test func aKeyDeletedAndWrittenAgainHasAHistoryOfItsOwn() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("lives-deleted")
        try await earlierLife(cluster, key)
        _ = try await offPool { try cluster.etcdctlChecked(["del", key]) }
        let store = try await open(cluster, key)
        try await store.set(PreferenceKey<Int>("fresh", default: 0), 1)
        for value in 1...40 { try await store.set(.counter, value) }

        let history = try await store.history()
        #expect(history.entries.map(\.sequence) == Array(1...41))
        #expect(Set(history.entries.flatMap(\.keys)) == ["fresh", "counter"])
        let aside = try await setAside(cluster, key)
        // The earlier archive, whole: its name and #1–#32.
        #expect(aside.values.sorted() == [33], "\(aside)")
        #expect(history.earlierHistories == aside.keys.sorted())

        // The operator's view: this life's changes, and one note.
        let log = try await runChild(
            "prefs", ["--etcd", cluster.endpointList, "--key", key, "log", "fresh"])
        #expect(log.status == 0, "\(log.standardError)")
        #expect(log.lines.count == 1 && log.lines[0].hasPrefix("#1 "), "\(log.standardOutput)")
        #expect(log.standardError.contains(try #require(aside.keys.first)), "\(log.standardError)")
    }

    @Test func aResetAfterCorruptionHasAHistoryOfItsOwn() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("lives-reset")
        try await earlierLife(cluster, key)
        _ = try await offPool { try cluster.etcdctlChecked(["put", key, "{ not json"]) }
        let store = try await open(cluster, key, corruption: .backupAndReset)
        for value in 1...30 { try await store.set(.counter, value) }
        let history = try await store.history()
        // #1 is the reset itself.
        #expect(history.entries.map(\.sequence) == Array(1...31))
        #expect(history.entries.first?.cause?.hasPrefix("reset after corruption") == true)
        #expect(history.entries.dropFirst().allSatisfy { $0.keys == ["counter"] })
        #expect(history.earlierHistories.count == 1, "\(history.earlierHistories)")
    }

    @Test func anOlderCopyNeverShowsTheChangesItUndid() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("lives-copy")
        let store = try await open(cluster, key)
        for value in 1...20 { try await store.set(.counter, value) }
        let copy = try await cluster.document(key)
        for value in 21...40 { try await store.set(.language, "v\(value)") }
        _ = try await offPool { try cluster.etcdctlChecked(["put", key], input: copy.text) }

        let reopened = try await open(cluster, key)
        var history = try await reopened.history()
        #expect(history.entries.map(\.sequence) == Array(1...20))
        // After each change on the copy, its history runs on from #20 without a gap.
        history = try await setTwentyChangesOnACopy(reopened)
        #expect(history.entries.prefix(20).allSatisfy { $0.keys == ["counter"] })
        let later = history.entries.filter { $0.sequence > 20 }
        #expect(later.map(\.sequence) == Array(21...40))
        #expect(
            later.map { $0.changes["counter"]?.new } == (101...120).map { .int(Int64($0)) },
            "\(later.map(\.changes))")
        #expect(!history.entries.contains { $0.keys.contains("language") })
        #expect(history.earlierHistories.count == 1, "\(history.earlierHistories)")
    }
}
