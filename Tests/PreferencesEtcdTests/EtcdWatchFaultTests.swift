import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// The watch under faults, on a real three-member cluster (E3, E4): it
/// resumes from a compacted revision, follows the cluster when its member is
/// killed, and leaves a member that stops answering without closing its
/// connections.
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 4))
struct EtcdWatchFaultTests {
    /// A store with its own backend (not shared in the process) on `endpoints`.
    func open(_ key: String, _ configuration: EtcdConfiguration) async throws
        -> (PreferencesStore, EtcdStorage)
    {
        let storage = try EtcdStorage(
            configuration: configuration, key: key, sharesStateInProcess: false)
        return (try await PreferencesStore(storage: storage), storage)
    }

    /// Puts a document with `counter` through `etcdctl` on `members` only;
    /// tried up to three times, as an election after a kill can outlast
    /// etcdctl's own timeout on a busy machine (a repeated put of the same
    /// document changes nothing a feed shows).
    func put(_ cluster: EtcdCluster, _ key: String, counter: Int, members: [Int]) async throws {
        let result = try await offPool {
            var result = try cluster.etcdctl(
                ["put", key], input: storeFile(#"{ "counter" : \#(counter) }"#), members: members)
            for _ in 1..<3 where result.status != 0 {
                result = try cluster.etcdctl(
                    ["put", key], input: storeFile(#"{ "counter" : \#(counter) }"#),
                    members: members)
            }
            return result
        }
        #expect(result.status == 0, "etcdctl put: \(result.standardError)")
    }

    /// The index of the member `storage`'s watch streams from, once it is live.
    func watchedMember(_ cluster: EtcdCluster, _ storage: EtcdStorage) async throws -> Int {
        let deadline = Date().addingTimeInterval(TestTime.scaled(seconds: 20))
        while Date() < deadline {
            if let endpoint = storage.currentWatchEndpoint,
                let index = cluster.endpoints.firstIndex(of: endpoint)
            {
                return index
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw EtcdCluster.ClusterError(message: "the watch was not streaming after 20 s")
    }

    /// Values after `start` never go backwards.
    func isIncreasing(_ values: [Int]) -> Bool {
        zip(values, values.dropFirst()).allSatisfy { $0 < $1 }
    }

    @Test func aWatchResumingFromACompactedRevisionReadsAgainAndEndsOnTheFinalState()
        async throws
    {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("compacted")
        // The store knows member 0 only: while it is down, nothing can take the watch.
        let (store, storage) = try await open(
            key,
            EtcdConfiguration(
                endpoints: [cluster.endpoints[0]], timeout: TestTime.scaled(seconds: 3)))
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        try await store.set(.counter, 1)
        #expect(await feed.next(1) == 1)
        #expect(try await watchedMember(cluster, storage) == 0)

        try await offPool { cluster.kill(0) }
        // Several revisions while the watch is cut off, then the history compacted.
        for value in 2...6 {
            try await put(cluster, key, counter: value, members: [1, 2])
        }
        let revision = try await offPool {
            EtcdClient.headerRevision(
                try cluster.post(1, "/v3/kv/range", ["key": EtcdClient.base64(key)]).json)
        }
        let compacted = try await offPool {
            try cluster.etcdctl(["compact", String(revision)], members: [1, 2])
        }
        #expect(compacted.status == 0, "etcdctl compact: \(compacted.standardError)")
        #expect(storage.watchCompactions == 0)

        try await offPool { try cluster.restart(0) }
        #expect(await feed.next(6, timeout: .seconds(30)) == 6, "the final state: \(feed.values)")
        #expect(store[.counter] == 6)
        // The feed may reach 6 first through the store's own re-read (a
        // reload that failed while member 0 was down is tried again), so
        // the watch's resumption is waited for.
        if await !eventually(seconds: 20, { storage.watchCompactions == 1 }) {
            let watch = store.core.state.withLock { $0.watching.watch } as? EtcdWatchStream
            let steps = try await offPool { watch?.recentHistory() ?? ["(no etcd watch)"] }
            Issue.record(
                "the watch did not resume from the compacted revision (\(storage.watchCompactions) compactions); its steps:\n\(steps.joined(separator: "\n"))"
            )
        }
        // What was compacted cannot be reported; nothing went backwards or was invented.
        #expect(feed.values == [0, 1, 6])
        // The registration tried while member 0 was down is tried again.
        #expect(await eventually(seconds: 20) { store.problems.isEmpty }, "\(store.problems)")

        // And the watch goes on from the re-read.
        try await put(cluster, key, counter: 7, members: [0])
        #expect(await feed.next(7) == 7)
        try await store.set(.counter, 8)
        #expect(
            try await offPool { try cluster.etcdctl(["get", key, "--print-value-only"]) }
                .standardOutput.contains("\"counter\" : 8"))
    }

    @Test func aWatchResumedAfterADropFollowsTheChangesMadeMeanwhileInOrder() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("resumed")
        let (store, storage) = try await open(
            key,
            EtcdConfiguration(
                endpoints: [cluster.endpoints[0]], timeout: TestTime.scaled(seconds: 3)))
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        try await store.set(.counter, 1)
        #expect(await feed.next(1) == 1)
        try await offPool { cluster.kill(0) }
        for value in 2...5 {
            try await put(cluster, key, counter: value, members: [1, 2])
        }
        try await offPool { try cluster.restart(0) }
        #expect(await feed.next(5, timeout: .seconds(30)) == 5, "\(feed.values)")
        // Nothing compacted: the watch resumed where it was, with no re-read.
        // (The store may fold changes that arrive together into one.)
        #expect(storage.watchCompactions == 0)
        #expect(feed.values.starts(with: [0, 1]) && isIncreasing(feed.values), "\(feed.values)")
        // The registration tried while member 0 was down is tried again.
        #expect(await eventually(seconds: 20) { store.problems.isEmpty }, "\(store.problems)")
    }

    @Test func whenTheWatchsMemberIsKilledTheWatchMovesToAnotherAndMissesNothing()
        async throws
    {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("moved")
        let (store, storage) = try await open(
            key, cluster.configuration(timeout: TestTime.scaled(seconds: 3)))
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        try await store.set(.counter, 1)
        #expect(await feed.next(1) == 1)
        let watched = try await watchedMember(cluster, storage)
        let others = cluster.endpoints.indices.filter { $0 != watched }

        try await offPool { cluster.kill(watched) }
        for value in 2...4 {
            try await put(cluster, key, counter: value, members: others)
        }
        #expect(await feed.next(4, timeout: .seconds(20)) == 4, "\(feed.values)")
        #expect(isIncreasing(feed.values), "\(feed.values)")
        #expect(try await watchedMember(cluster, storage) != watched)
        // Requests go to the members that answer.
        try await store.set(.counter, 5)
        #expect(await feed.next(5) == 5)
        #expect(store.problems.isEmpty, "\(store.problems)")
    }

    @Test func aMemberThatStopsAnsweringLosesTheWatchAndTheRequests() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("stopped")
        var configuration = cluster.configuration(timeout: TestTime.scaled(seconds: 3))
        configuration.watchCheckInterval = 0.5
        let (store, storage) = try await open(key, configuration)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        try await store.set(.counter, 1)
        #expect(await feed.next(1) == 1)
        let watched = try await watchedMember(cluster, storage)
        let others = cluster.endpoints.indices.filter { $0 != watched }

        // Stopped, not killed: its sockets stay open and the watch hears nothing.
        try await offPool { cluster.pause(watched) }
        defer { cluster.resume(watched) }
        try await offPool { try cluster.waitForLeader(deadline: 20, members: others) }
        try await put(cluster, key, counter: 2, members: others)
        #expect(await feed.next(2, timeout: .seconds(20)) == 2, "\(feed.values)")
        #expect(try await watchedMember(cluster, storage) != watched)
        // A write does not wait out the whole timeout on the silent member.
        try await store.set(.counter, 3)
        #expect(await feed.next(3) == 3)
        let stored = try await offPool {
            try cluster.etcdctl(["get", key, "--print-value-only"], members: others)
        }
        #expect(stored.standardOutput.contains("\"counter\" : 3"))
        #expect(isIncreasing(feed.values), "\(feed.values)")
    }
}
