import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// A watch never stays silent while the cluster moves on (E3, E4,
/// <doc:EtcdGuarantees>): with the leader killed while the watch is on it
/// and while it is on a follower, with the watch's follower cut off from
/// its peers, and with a watch stream that stays connected and sends
/// nothing, the feed reaches the last value written, or the store lists a
/// problem saying the watch is lost, within the watch's reaction bound.
/// Each case runs ``rounds`` rounds on one three-member cluster and prints
/// its worst delay: 3 in an ordinary run, and as many as
/// `PREFS_WATCH_STALL_ROUNDS` says for a measurement (20 for the figures in
/// the reliability notes; the four cases then take about five minutes).
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 12))
struct EtcdWatchStallTests {
    static let rounds =
        ProcessInfo.processInfo.environment["PREFS_WATCH_STALL_ROUNDS"]
        .flatMap { Int($0) }.map { max(1, $0) } ?? 3

    /// The observer's configuration: member `first`'s endpoint first (so its
    /// watch starts there), short checks and timeout.
    func observerConfiguration(_ endpoints: [URL], first: Int) -> EtcdConfiguration {
        var configuration = EtcdConfiguration(
            endpoints: Array(endpoints[first...] + endpoints[..<first]),
            timeout: TestTime.scaled(seconds: 2))
        configuration.watchCheckInterval = TestTime.scaled(seconds: 0.5)
        return configuration
    }

    /// The longest the observer may take, by its own configuration.
    func bound(_ configuration: EtcdConfiguration) -> Double {
        EtcdWatchStream.reactionBound(configuration)
    }

    /// One round's observer: a store of its own on `key`, its feed, and its backend.
    struct Observer {
        let store: PreferencesStore
        let storage: EtcdStorage
        let feed: FeedRecorder<Int>
    }

    /// Opens an observer of `key` whose watch is live on `endpoints[first]`
    /// and has seen `value`.
    func observe(
        _ key: String, _ endpoints: [URL], first: Int, seeing value: Int,
        writer: PreferencesStore
    ) async throws -> Observer {
        let storage = try EtcdStorage(
            configuration: observerConfiguration(endpoints, first: first), key: key,
            sharesStateInProcess: false)
        let store = try await PreferencesStore(storage: storage)
        let feed = FeedRecorder(store.changes(.counter))
        try await writer.set(.counter, value)
        #expect(await feed.next(value) == value, "the observer's first value")
        let live = await eventually(seconds: 20) {
            storage.currentWatchEndpoint == endpoints[first]
        }
        try #require(
            live,
            "the watch is not on \(endpoints[first]) but on \(String(describing: storage.currentWatchEndpoint))"
        )
        return Observer(store: store, storage: storage, feed: feed)
    }

    /// What came first: the counter at `value` or more, or a problem naming the watch.
    enum Outcome: Sendable, Equatable {
        case reached
        case problem(String)
        case nothing
    }

    /// Waits up to `seconds` (not scaled: a bound already is) for the
    /// first outcome, and how long it took.
    func firstOutcome(_ store: PreferencesStore, reaching value: Int, within seconds: Double)
        async -> (Outcome, Double)
    {
        let start = Date()
        let (outcomes, continuation) = AsyncStream<Outcome>.makeStream()
        let values = Task {
            for await counter in store.changes(.counter) where counter >= value {
                continuation.yield(.reached)
                return
            }
        }
        let problems = Task {
            for await list in store.problemChanges() {
                if let problem = list.first(where: { $0.message.hasPrefix("cannot watch") }) {
                    continuation.yield(.problem(problem.message))
                    return
                }
            }
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            continuation.yield(.nothing)
        }
        var iterator = outcomes.makeAsyncIterator()
        let first = await iterator.next() ?? .nothing
        let elapsed = Date().timeIntervalSince(start)
        values.cancel()
        problems.cancel()
        timer.cancel()
        return (first, elapsed)
    }

    /// What a failed round knows: the store's state and its watch's last steps.
    func diagnosis(_ observer: Observer) async throws -> String {
        let watch =
            observer.store.core.state.withLock { $0.watching.watch } as? EtcdWatchStream
        let steps = try await offPool { watch?.recentHistory() ?? ["(no etcd watch)"] }
        return "counter = \(observer.store[.counter]), problems \(observer.store.problems), "
            + "feed \(observer.feed.values.suffix(5)); the watch's last steps:\n"
            + steps.filter { !$0.contains(" events up to ") }.suffix(30).joined(separator: "\n")
    }

    /// After a round: the observer follows the cluster again and lists no problem.
    func recovers(_ observer: Observer, to value: Int) async throws {
        if await observer.feed.next(where: { $0 >= value }, timeout: .seconds(30)) == nil {
            Issue.record(
                "the observer never reached \(value) after the fault: \(try await diagnosis(observer))"
            )
        }
        if await !eventually(seconds: 30, { observer.store.problems.isEmpty }) {
            Issue.record("the problem did not clear: \(try await diagnosis(observer))")
        }
        await observer.feed.cancel()
    }

    /// Prints and checks the delays of a case's rounds.
    func summarize(_ name: String, _ delays: [Double], bound: Double) {
        let worst = delays.max() ?? 0
        let sorted = delays.sorted()
        let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        print(
            "\(name): \(delays.count) rounds, worst delay "
                + String(cFormat: "%.3f s, median %.3f s (bound %.2f s)", worst, median, bound))
        #expect(delays.count == Self.rounds)
    }

    /// Kills the leader mid-run while the observer's watch is on the leader
    /// (`onLeader`) or on a follower: a writer keeps setting the counter
    /// across the kill; the delay runs from the last write's answer.
    func leaderKilledRounds(onLeader: Bool) async throws -> ([Double], Double) {
        let cluster = try await offPool { try EtcdCluster(size: 3, lifetime: 900) }
        var delays: [Double] = []
        var reaction = 0.0
        for round in 0..<Self.rounds {
            let key = uniqueKey("stall-\(round)")
            let writer = try await PreferencesStore(
                storage: cluster.storage(
                    key, timeout: TestTime.scaled(seconds: 10), sharesState: false))
            let leader = try await offPool { try cluster.leaderIndex() }
            let first = onLeader ? leader : (leader + 1 + round % 2) % 3
            let observer = try await observe(
                key, cluster.endpoints, first: first, seeing: 1, writer: writer)
            reaction = bound(observer.storage.configuration)
            let final = 12
            var killing: Task<Void, any Error>?
            for value in 2...final {
                try await writer.set(.counter, value)
                // The next writes are in flight while the leader dies.
                if value == 4 { killing = Task { try await offPool { cluster.kill(leader) } } }
            }
            let (outcome, delay) = await firstOutcome(
                observer.store, reaching: final, within: 2 * reaction)
            try await killing?.value
            delays.append(delay)
            if outcome == .nothing || delay > reaction {
                Issue.record(
                    "round \(round): \(outcome) after \(delay) s (bound \(reaction) s), the watch started on member \(first), leader \(leader): \(try await diagnosis(observer))"
                )
            }
            try await offPool { try cluster.restart(leader) }
            try await recovers(observer, to: final)
        }
        return (delays, reaction)
    }

    @Test func theLeaderKilledWhileTheWatchIsOnItIsFollowedOrReported() async throws {
        let (delays, reaction) = try await leaderKilledRounds(onLeader: true)
        summarize("leader killed, watch on the leader", delays, bound: reaction)
    }

    @Test func theLeaderKilledWhileTheWatchIsOnAFollowerIsFollowedOrReported() async throws {
        let (delays, reaction) = try await leaderKilledRounds(onLeader: false)
        summarize("leader killed, watch on a follower", delays, bound: reaction)
    }

    /// The watch's follower cut off from its peers: both stopped with
    /// SIGSTOP, so it loses its leader while it still answers. No write can
    /// be made meanwhile, so the store must say the watch is lost, within
    /// the bound plus etcd's own time to notice (two election timeouts);
    /// once the peers go on, the next write arrives and the problem clears.
    @Test func aFollowerCutOffFromItsPeersIsReported() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 3, lifetime: 900) }
        var delays: [Double] = []
        var reaction = 0.0
        for round in 0..<Self.rounds {
            let key = uniqueKey("cut-off-\(round)")
            let writer = try await PreferencesStore(
                storage: cluster.storage(
                    key, timeout: TestTime.scaled(seconds: 10), sharesState: false))
            let leader = try await offPool { try cluster.leaderIndex() }
            let follower = (leader + 1 + round % 2) % 3
            let peers = cluster.endpoints.indices.filter { $0 != follower }
            let observer = try await observe(
                key, cluster.endpoints, first: follower, seeing: 1, writer: writer)
            reaction =
                bound(observer.storage.configuration) + 2 * Double(EtcdCluster.electionTimeout)
                / 1000
            try await offPool { peers.forEach(cluster.pause) }
            let (outcome, delay) = await firstOutcome(
                observer.store, reaching: 2, within: 2 * reaction)
            try await offPool { peers.forEach(cluster.resume) }
            delays.append(delay)
            if case .problem = outcome, delay <= reaction {
            } else {
                Issue.record(
                    "round \(round): \(outcome) after \(delay) s (bound \(reaction) s), the watch on member \(follower): \(try await diagnosis(observer))"
                )
            }
            try await offPool { try cluster.waitForLeader(deadline: 20) }
            try await writer.set(.counter, 2)
            try await recovers(observer, to: 2)
        }
        summarize("follower cut off from its peers", delays, bound: reaction)
    }

    /// The failure that matters most, made on purpose: a watch stream that
    /// stays connected and sends nothing while its member answers every
    /// other request (a relay in front of the member stops passing the
    /// watch's bytes). Status checks alone pass; the watch must still
    /// notice that the key moved on and resume elsewhere.
    @Test func aWatchStreamThatGoesSilentWhileItsMemberAnswersIsLeft() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 3, lifetime: 900) }
        var delays: [Double] = []
        var reaction = 0.0
        for round in 0..<Self.rounds {
            let key = uniqueKey("silent-\(round)")
            let writer = try await PreferencesStore(
                storage: cluster.storage(key, sharesState: false))
            let member = round % 3
            let relay = try CountingRelay(to: cluster.endpoints[member])
            var endpoints = cluster.endpoints
            endpoints[member] = relay.url
            let observer = try await observe(
                key, endpoints, first: member, seeing: 1, writer: writer)
            reaction = bound(observer.storage.configuration)
            relay.freezeWatches()
            try await writer.set(.counter, 2)
            let (outcome, delay) = await firstOutcome(
                observer.store, reaching: 2, within: 2 * reaction)
            delays.append(delay)
            if outcome == .nothing || delay > reaction {
                Issue.record(
                    "round \(round): \(outcome) after \(delay) s (bound \(reaction) s): \(try await diagnosis(observer))"
                )
            }
            try await recovers(observer, to: 2)
            // Moved to another member, not back to the silent stream.
            #expect(observer.storage.currentWatchEndpoint != relay.url)
            relay.stop()
        }
        summarize("watch stream silent, member answering", delays, bound: reaction)
    }
}
