import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// History and undo on etcd (H7): replicas that all write see one history
/// with no gaps, older entries live under `KEY.history/`, and revert,
/// restore and the resuming feed work as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 5))
struct EtcdHistoryTests {
    func replica(_ cluster: EtcdCluster, _ key: String) async throws -> PreferencesStore {
        try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false)
    }

    @Test func twoReplicasWritingAtOnceSeeOneHistoryWithNoGaps() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let replicas = [try await replica(cluster, key), try await replica(cluster, key)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in replicas {
                group.addTask {
                    for _ in 0..<30 { try await store.edit { $0[.counter] += 1 } }
                }
            }
            try await group.waitForAll()
        }
        for store in replicas {
            let history = try await store.history()
            #expect(history.latest == 60)
            #expect(history.entries.map(\.sequence) == Array(1...60))
            // Each entry's old value is the one before it's new value.
            var previous: PreferenceValue?
            for entry in history.entries {
                let change = try #require(entry.changes["counter"])
                #expect(change.old == previous, "#\(entry.sequence)")
                previous = change.new
            }
            #expect(previous == 60)
        }
        // The older entries are keys of their own beside the store's key.
        let listed = try await offPool {
            try cluster.etcdctl(["get", key + ".history/", "--prefix", "--keys-only"])
        }
        #expect(listed.status == 0, "\(listed.standardError)")
        let keys = listed.standardOutput.split(separator: "\n")
        #expect(keys.count >= 41, "\(keys.count) archived entries")
        // Sequence 0 names the history; the entries follow from #1.
        #expect(keys.first == Substring(key + ".history/00000000000000000000"))
        #expect(keys.dropFirst().first == Substring(key + ".history/00000000000000000001"))
    }

    /// H4 in etcd itself: the archive's keys are pruned to the limit's
    /// number of entries as entries are archived. With a limit of 10, 100
    /// changes archive #1–#96 (16 at a time, at #17, #33 … #97) and etcd
    /// keeps the keys of #87–#96 alone, read with etcdctl.
    @Test func theArchiveInEtcdKeepsOnlyTheLimitsNumberOfEntries() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        var limits = PreferencesLimits()
        limits.history = HistoryLimit(entries: 10)
        let store = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), limits: limits, liveReads: false)
        for value in 1...100 { try await store.set(.counter, value) }
        let listed = try await offPool {
            try cluster.etcdctlChecked(["get", key + ".history/", "--prefix", "--keys-only"])
        }
        let expected = ([0] + Array(87...96)).map { sequence in
            let digits = String(sequence)
            return key + ".history/" + String(repeating: "0", count: 20 - digits.count) + digits
        }
        #expect(
            listed.standardOutput.split(separator: "\n").map(String.init) == expected,
            "\(listed.standardOutput)")
        #expect(try await store.history().entries.map(\.sequence) == Array(91...100))
    }

    @Test func aRemovalIsAttributedAndAShortHistorySaysWhereItStarts() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        var limits = PreferencesLimits()
        limits.history = HistoryLimit(entries: 5)
        let store = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), limits: limits, liveReads: false)
        try await store.set(.language, "fr")
        try await store.remove(.language)
        let removal = try #require(try await store.history().entries.last)
        #expect(removal.sequence == 2 && removal.changes["language"] == .init(old: "fr", new: nil))
        #expect(removal.user == effectiveUserName() && !removal.host.isEmpty)
        for value in 1...20 { try await store.set(.counter, value) }
        let kept = try await store.history()
        #expect(kept.entries.map(\.sequence) == Array(18...22))
        var events = store.changes(since: 1).makeAsyncIterator()
        #expect(
            try await events.next(within: .seconds(20), "the gap") == .gap(after: 1, resumesAt: 18))
        await #expect(throws: PreferencesError.historyUnavailable(sequence: 2, oldestKept: 18)) {
            try await store.revert(2)
        }
    }

    @Test func revertRestoreAndTheResumingFeedWorkOnEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await replica(cluster, key)
        for value in 1...20 { try await store.set(.counter, value) }
        try await store.set(.language, "fr")
        #expect(try await store.revert(21) == 22)
        #expect(store[.language] == "en")
        #expect(try await store.restore(to: 5) == 23)
        #expect(store[.counter] == 5)
        // Another replica, as after a restart, resumes after #18.
        let other = try await replica(cluster, key)
        var events = other.changes(since: 18).makeAsyncIterator()
        var seen: [Int64] = []
        for _ in 19...23 {
            guard case .change(let entry) = try await events.next(within: .seconds(20), "a change")
            else {
                Issue.record("a gap where every change is kept")
                return
            }
            seen.append(entry.sequence)
        }
        #expect(seen == Array(19...23))
    }

    @Test func revertRefusesWhenAKeyChangedSinceAndForceWritesTheOldValuesAsANewChange()
        async throws
    {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await replica(cluster, key)
        try await store.set(.counter, 1)
        try await store.edit { prefs in
            prefs[.counter] = 2
            prefs[.language] = "fr"
        }
        try await store.set(.counter, 3)
        let before = try await storedDocument(cluster, key)
        await #expect(
            throws: PreferencesError.conflict(
                keys: ["counter"],
                reason: "change #2 cannot be reverted: these keys changed since")
        ) {
            try await store.revert(2)
        }
        #expect(try await storedDocument(cluster, key) == before, "a refused revert wrote")

        #expect(try await store.revert(2, force: true) == 4)
        let after = try await storedDocument(cluster, key)
        #expect(after.sequence == 4 && after.values == ["counter": 1])
        // Another replica, as another process would, reads the new change.
        let other = try await replica(cluster, key)
        let history = try await other.history()
        #expect(history.entries.map(\.sequence) == [1, 2, 3, 4])
        let last = try #require(history.entries.last)
        #expect(last.cause == "revert #2")
        #expect(
            last.changes == [
                "counter": .init(old: 3, new: 1), "language": .init(old: "fr", new: nil),
            ])
    }

    @Test func restoreGoesBackToAnyKeptStateAndForwardAgainOnEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        try await runRestoreScenario(
            try await replica(cluster, key),
            stored: {
                let document = try await storedDocument(cluster, key)
                return (document.sequence, document.values)
            },
            reopen: { try await replica(cluster, key) })
    }
}

/// The store's document as `etcdctl get` shows it: its revision, sequence
/// and values, read apart from any store.
private struct StoredDocument: Equatable {
    var revision: Int
    var sequence: Int64
    var values: [String: PreferenceValue]
}

private func storedDocument(_ cluster: EtcdCluster, _ key: String) async throws -> StoredDocument {
    let output = try await offPool { try cluster.etcdctlChecked(["get", key, "-w", "json"]) }
    let reply = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
    let kvs = try #require(
        (reply as? [String: Any])?["kvs"] as? [[String: Any]], "\(output.standardOutput)")
    let pair = try #require(kvs.first, "no key \(key)")
    let revision = try #require(pair["mod_revision"] as? Int, "\(pair)")
    let encoded = try #require(pair["value"] as? String, "\(pair)")
    let bytes = try #require(Data(base64Encoded: encoded), "\(encoded)")
    let parsed = try TestJSON.parse(Array(bytes))
    guard case .object(let document) = parsed else {
        Issue.record("not a JSON object at \(key): \(parsed.jsonText)")
        return StoredDocument(revision: revision, sequence: -1, values: [:])
    }
    var sequence: Int64 = 0
    if case .int(let number)? = document["sequence"] { sequence = number }
    var values: [String: PreferenceValue] = [:]
    if case .object(let stored)? = document["values"] { values = stored }
    return StoredDocument(revision: revision, sequence: sequence, values: values)
}
