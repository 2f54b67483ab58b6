import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// History and undo on etcd (H7): replicas that all write see one history
/// with no gaps, older entries live under `KEY.history/`, and revert,
/// restore and the resuming feed work as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .timeLimit(.minutes(5)))
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
        #expect(keys.count >= 40, "\(keys.count) archived entries")
        #expect(keys.first == Substring(key + ".history/00000000000000000001"))
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
}
