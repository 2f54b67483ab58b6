import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fleet on a real three-member cluster: separate processes incrementing
/// one counter, with `prefs set` beside them, with the leader killed, and
/// with the whole cluster down and back (<doc:Reliability>; E2–E4, <doc:EtcdGuarantees>).
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 6))
struct EtcdClusterTests {
    static let processes = 4
    static let increments = 200

    /// Runs `body` with `prefs-harness increment` children on `key`, and
    /// kills every child still running when it ends, however it ends: a
    /// test that throws, or stops at a failed `#require`, leaves none behind.
    func withIncrementers<T>(
        _ cluster: EtcdCluster, _ key: String, _ body: ([RunningProcess]) async throws -> T
    ) async throws -> T {
        var environment = cleanEnvironment()
        environment["PREFS_HARNESS_ETCD"] = cluster.endpointList
        var children: [RunningProcess] = []
        defer { Self.killRunning(children) }
        for _ in 0..<Self.processes {
            children.append(
                try RunningProcess(
                    "prefs-harness", ["increment", key, "counter", "\(Self.increments)"],
                    environment: environment))
        }
        return try await body(children)
    }

    /// Kills the children that have not exited (an exited one's pid may be
    /// another process's by now).
    static func killRunning(_ children: [RunningProcess]) {
        for child in children where child.process.isRunning { child.kill() }
    }

    /// Waits for every child to say "done" and exit 0, killing all of them
    /// if that takes longer than `seconds`; a child that did not is
    /// described by what went wrong.
    func finish(_ children: [RunningProcess], within seconds: Double) async throws -> [String] {
        let limit = TestTime.scaled(seconds: seconds)
        let fired = Locked(false)
        let watchdog = DispatchWorkItem {
            fired.withLock { $0 = true }
            Self.killRunning(children)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: watchdog)
        defer { watchdog.cancel() }
        let outcomes = try await offPool {
            children.map { child in
                let limit = Duration.seconds(Int(seconds))
                let said: String
                do {
                    said = try child.readLine(timeout: limit) ?? "<no output>"
                } catch {
                    return "\(error)"
                }
                do {
                    let status = try child.wait(timeout: limit)
                    return status == 0 ? said : "\(said) (exit \(status))"
                } catch {
                    return "\(said) (\(error))"
                }
            }
        }
        // A child the watchdog killed says so, not only "exit 9".
        guard fired.value else { return outcomes }
        return outcomes.map { "\($0) [the children were killed at their deadline, \(limit) s]" }
    }

    /// The counter as stored in etcd now.
    func storedCounter(_ cluster: EtcdCluster, _ key: String) async throws -> Int {
        let store = try await PreferencesStore(storage: cluster.storage(key, sharesState: false))
        return store[.counter]
    }

    @Test func fourProcessesThroughThreeMembersWithPrefsSetBesideThemEndExact() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("increments")
        // `prefs set` of another key in the same document, in a loop, until
        // the incrementers are done: none of its writes may cost an increment.
        let stop = Locked(false)
        // The loop ends with the test, however the test ends.
        defer { stop.withLock { $0 = true } }
        let setter = Task { () -> (Int, String) in
            var last = 0
            while !stop.value {
                let result = try await runChild(
                    "prefs",
                    [
                        "--etcd", cluster.endpointList, "--key", key, "set", "operator",
                        "\(last + 1)",
                    ])
                guard result.status == 0 else { return (last, result.standardError) }
                last += 1
            }
            return (last, "")
        }
        let said = try await withIncrementers(cluster, key) { children in
            try await finish(children, within: 120)
        }
        stop.withLock { $0 = true }
        let (sets, failure) = try await setter.value
        #expect(said == Array(repeating: "done", count: Self.processes))
        #expect(failure.isEmpty, "prefs set failed: \(failure)")
        #expect(sets > 0)
        let store = try await PreferencesStore(storage: cluster.storage(key, sharesState: false))
        #expect(store[.counter] == Self.processes * Self.increments)
        #expect(store[PreferenceKey<Int>("operator", default: 0)] == sets)
    }

    @Test func theLeaderKilledMidRunLosesNoIncrementAndAppliesNoneTwice() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("leader-kill")
        let observer = try await PreferencesStore(storage: cluster.storage(key, sharesState: false))
        let feed = FeedRecorder(observer.changes(.counter))
        let total = Self.processes * Self.increments
        let said = try await withIncrementers(cluster, key) { children in
            #expect(
                await feed.next(where: { $0 >= total / 4 }, timeout: .seconds(120)) != nil,
                "the run got going")
            let leader = try await offPool { try cluster.leaderIndex() }
            try await offPool { cluster.kill(leader) }
            if await feed.next(where: { $0 >= total / 2 }, timeout: .seconds(120)) == nil {
                Issue.record(
                    "the observer did not see the run go on without the leader: \(try await diagnosis(observer, feed))"
                )
            }
            try await offPool { try cluster.restart(leader) }
            return try await finish(children, within: 120)
        }
        #expect(said == Array(repeating: "done", count: Self.processes))
        let stored = try await storedCounter(cluster, key)
        #expect(
            stored == total, "\(stored - total) increments applied twice (or lost, if negative)")
        if await feed.next(total) != total {
            Issue.record(
                "the observer's feed did not follow the new leader to \(total): \(try await diagnosis(observer, feed))"
            )
        }
    }

    /// The harness's own cleanup: a test that throws while its children run
    /// leaves none of them running.
    @Test func childrenStillRunningWhenATestThrowsAreKilled() async throws {
        let cluster = try await SharedEtcd.cluster()
        struct Stopped: Error {}
        let started = Locked<[RunningProcess]>([])
        await #expect(throws: Stopped.self) {
            try await withIncrementers(cluster, uniqueKey("cleanup")) { children in
                started.withLock { $0 = children }
                throw Stopped()
            }
        }
        let children = started.value
        #expect(children.count == Self.processes)
        for child in children {
            // A killed child ends at once; one left running would go on
            // incrementing for seconds, and end with status 0, which fails
            // below (the deadline only bounds a loaded run's wait).
            let status = try await child.exit(timeout: .seconds(60))
            #expect(
                child.process.terminationReason == .uncaughtSignal && status == SIGKILL,
                "a child was not killed: it ended with status \(status)")
        }
    }

    /// What a store that stopped following its cluster knows, and its
    /// watch's last steps.
    func diagnosis(_ store: PreferencesStore, _ feed: FeedRecorder<Int>) async throws -> String {
        let watch = store.core.state.withLock { $0.watching.watch } as? EtcdWatchStream
        let history = try await offPool { watch?.recentHistory() ?? ["(no etcd watch)"] }
        return "the store holds counter = \(store[.counter]), problems \(store.problems); "
            + "its feed gave \(feed.values.count) values, the last \(feed.values.suffix(3)); "
            + "its watch's last steps:\n" + history.suffix(60).joined(separator: "\n")
    }

    @Test func theWholeClusterDownFailsClearlyKeepsTheLastStateAndRecoversWithoutReopen()
        async throws
    {
        let cluster = try await offPool { try EtcdCluster(size: 3) }
        let key = uniqueKey("outage")
        // Longer than an election (heartbeat 100 ms, election 1 s): killing
        // member 0 below may kill the leader, and the set after it must not
        // fail while the others elect a new one.
        let store = try await PreferencesStore(
            storage: cluster.storage(key, timeout: TestTime.scaled(seconds: 4)))
        let feed = FeedRecorder(store.changes(.counter))
        let problems = FeedRecorder(store.problemChanges())
        try await store.set(.counter, 1)
        #expect(await feed.next(1) == 1)

        // One member down: calls fail over to the others.
        try await offPool { cluster.kill(0) }
        try await store.set(.counter, 2)
        #expect(await feed.next(2) == 2)

        try await offPool { cluster.stopAll() }
        await #expect {
            try await store.set(.counter, 3)
        } throws: { error in
            guard case PreferencesError.io(_, let path, _, let message) = error else {
                return false
            }
            return path == key
                && cluster.endpoints.allSatisfy { message.contains($0.absoluteString) }
        }
        #expect(store[.counter] == 2, "reads serve the last known state")
        let interrupted = await problems.next(where: { list in
            list.contains { $0.message.contains("no etcd endpoint answered") }
        })
        #expect(interrupted != nil, "problems: \(store.problems)")

        try await offPool { try cluster.restartAll() }
        // Changed by someone else while this store was cut off from the cluster.
        let other = try await PreferencesStore(storage: cluster.storage(key, sharesState: false))
        try await other.set(.counter, 5)
        #expect(await feed.next(5) == 5, "the feed delivers what changed meanwhile")
        #expect(await problems.next([]) == [])
        try await store.set(.counter, 6)
        #expect(store[.counter] == 6)
        #expect(try await storedCounter(cluster, key) == 6)
    }
}
