import Foundation
import Preferences
import PreferencesEtcd

/// P11: what replicas cost (`<doc:RollingOutAChange>`).
///
/// - P2 with 10 live replicas (`prefs-harness replica` processes on the
///   same file, each re-reading every change and reporting its sequence)
///   against P2 with none: the median of one durable `set` on the 20-key
///   store, measured before the replicas start and while they run.
/// - `set --wait` to 10 replicas on a 3-member etcd cluster: from the start
///   of a `set` until every replica's registration reports its sequence,
///   awaited through the registrations' watch, as `prefs set --wait` does;
///   p50 and p90.
extension Cases {
    func replicas(harness: URL?) async throws -> [Row] {
        guard let harness else {
            return [
                Row(
                    id: "P11", measure: "replicas",
                    ours: "not run: no prefs-harness beside prefs-bench",
                    comparison: "—", ratio: nil, target: "≤ 1.1×", met: nil)
            ]
        }
        var rows = [try await setWithReplicas(harness: harness)]
        if let server = executable("etcd") {
            rows.append(try await waitOnEtcd(harness: harness, server: server))
        } else {
            rows.append(
                Row(
                    id: "P11", measure: "set --wait, 10 replicas, etcd (3 members)",
                    ours: "not run: etcd-server is not installed", comparison: "—", ratio: nil,
                    target: "p50, p90 reported", met: nil))
        }
        return rows
    }

    private func setWithReplicas(harness: URL) async throws -> Row {
        let url = file("p11.json")
        try await seed(url, twentyValues())
        let store = try await PreferencesStore(fileURL: url, limits: Self.noHistory)
        var counter = 0
        func sets() async throws -> [Double] {
            var samples: [Double] = []
            for _ in 0..<iterations {
                counter += 1
                let value = counter
                samples.append(try await timeAsync { try await store.set(.benchCounter, value) })
            }
            return samples
        }
        let none = try await sets()
        // The same ten processes following every change through a feed,
        // without registering: what the replicas cost beyond reading.
        let followers = try startReplicas(
            harness, key: url.path, environment: [:], extra: ["unregistered"])
        let following = try await sets()
        stopReplicas(followers)
        let children = try startReplicas(harness, key: url.path, environment: [:])
        defer { stopReplicas(children) }
        // Each registers about a second after its open: time the sets once
        // all have (or after 10 s, and the row says how many had).
        var registered = 0
        for _ in 0..<1000 {
            registered = try store.storage.replicas?.list().count ?? 0
            if registered > children.count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let with = try await sets()
        let ratio = median(with) / median(none)
        return Row(
            id: "P11", measure: "one durable set, 20-key store, \(registered - 1) live replicas",
            ours: format(nanoseconds: median(with)),
            comparison:
                "no other replica \(format(nanoseconds: median(none))); 10 unregistered followers \(format(nanoseconds: median(following))) (\(String(format: "%.2f", median(with) / median(following)))×)",
            ratio: ratio, target: "≤ 1.1× P2 with none", met: ratio <= 1.1,
            detail: [
                "with_ns": median(with), "none_ns": median(none),
                "followers_ns": median(following),
            ])
    }

    private func waitOnEtcd(harness: URL, server: String) async throws -> Row {
        let cluster = try BenchCluster(server: server, directory: file("etcd-p11"))
        defer { cluster.stop() }
        let configuration = EtcdConfiguration(endpoints: cluster.endpoints, timeout: 20)
        let key = "/bench/replicas"
        let list = cluster.endpoints.map(\.absoluteString).joined(separator: ",")
        let children = try startReplicas(
            harness, key: key, environment: ["PREFS_HARNESS_ETCD": list])
        defer { stopReplicas(children) }
        let storage = try EtcdStorage(
            configuration: configuration, key: key, sharesStateInProcess: false)
        let writer = try await PreferencesStore(
            storage: storage, limits: Self.noHistory, liveReads: false)
        let (events, continuation) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch = try storage.replicas?.watch { continuation.yield() }
        defer { watch?.cancel() }
        var iterator = events.makeAsyncIterator()
        let rounds = quick ? 20 : 100
        var samples: [Double] = []
        for round in 0..<(rounds + 5) {
            let start = DispatchTime.now().uptimeNanoseconds
            try await writer.set(.benchCounter, round + 1)
            let sequence = writer.snapshot.sequence
            while true {
                let replicas = try await onThread { try storage.replicas?.list() ?? [] }
                if replicas.count >= children.count
                    && replicas.allSatisfy({ $0.applied >= sequence })
                {
                    break
                }
                _ = await iterator.next()
            }
            if round >= 5 {  // warm-up
                samples.append(Double(DispatchTime.now().uptimeNanoseconds - start))
            }
        }
        let p50 = median(samples)
        let p90 = percentile(samples, 0.9)
        return Row(
            id: "P11", measure: "set --wait, \(children.count) replicas, etcd (3 members)",
            ours: "p50 \(format(nanoseconds: p50)), p90 \(format(nanoseconds: p90))",
            comparison: "—", ratio: nil, target: "p50, p90 reported", met: nil,
            detail: ["wait_p50_ns": p50, "wait_p90_ns": p90])
    }

    /// Ten `prefs-harness replica` processes on `key`, once each says "ready".
    private func startReplicas(
        _ harness: URL, key: String, environment: [String: String], extra: [String] = []
    ) throws -> [BenchChild] {
        var children: [BenchChild] = []
        for _ in 0..<10 {
            let child = try BenchChild(
                harness.path, ["replica", key, "1000000"] + extra, environment: environment,
                output: .pipe)
            children.append(child)
            let line = child.output?.readLine()
            guard line == "ready" else {
                stopReplicas(children)
                throw BenchFailure("prefs-harness replica said \(line ?? "nothing")")
            }
        }
        return children
    }

    private func stopReplicas(_ children: [BenchChild]) {
        for child in children { child.kill() }
    }
}
