import Foundation
import LocalEtcd
import Preferences
import PreferencesEtcd

#if canImport(Glibc)
    import Glibc
#endif

/// P9: the etcd backend on a three-member cluster on loopback, started by
/// the benchmark (Debian's `etcd-server`; the row says so when it is not
/// installed).
///
/// - `set`: a store with a running change feed (so it knows the key's
///   revision from its watch) against the floor: one bare compare-and-swap
///   transaction of the same document through `EtcdStorage.write`, with no
///   store around it, on its own kept-alive connection (as the store's is),
///   measured side by side.
/// - Delivery: from the start of a `set` on one replica to another
///   replica's feed running with the value (separate states, as in two
///   processes), over 200 rounds.
extension Cases {
    func etcd() async throws -> Row {
        guard let server = executable("etcd") else {
            return Row(
                id: "P9", measure: "etcd set; delivery to another replica",
                ours: "not run: etcd-server is not installed", comparison: "—", ratio: nil,
                target: "≤ 1.5×; p50 ≤ 10 ms", met: nil)
        }
        let cluster = try BenchCluster(server: server, directory: file("etcd"))
        defer { cluster.stop() }
        let configuration = EtcdConfiguration(endpoints: cluster.endpoints)
        let rounds = quick ? 50 : 200

        // set against one bare transaction.
        let store = try await PreferencesStore(
            storage: EtcdStorage(configuration: configuration, key: "/bench/set"),
            limits: Cases.noHistory)
        let feed = store.changes(.benchCounter)
        let watching = Task { for await _ in feed {} }
        defer { watching.cancel() }
        try await store.edit { prefs in
            for (key, value) in twentyValues() { prefs[raw: key] = value }
        }
        let bare = try EtcdStorage(configuration: configuration, key: "/bench/bare")
        // The store's own document, byte for byte.
        let storage = store.storage
        let read = try await onThread { try storage.read().bytes }
        guard let bytes = read else { throw BenchFailure("the store's key is empty") }
        var revision = StorageRevision.absent
        var sets: [Double] = []
        var transactions: [Double] = []
        for round in 0..<(rounds + 10) {
            let setTime = try await timeAsync { try await store.set(.benchCounter, round + 1) }
            let expected = revision
            let (transactionTime, next) = try await onThread {
                var next: StorageRevision?
                let elapsed = try time { next = try bare.write(bytes, ifRevision: expected) }
                return (elapsed, next)
            }
            guard let next else { throw BenchFailure("the bare transaction lost its compare") }
            revision = next
            if round >= 10 {  // warm-up
                sets.append(setTime)
                transactions.append(transactionTime)
            }
        }
        let ratio = pairedRatio(sets, transactions)

        // Delivery to another replica.
        let writer = try await PreferencesStore(
            storage: EtcdStorage(
                configuration: configuration, key: "/bench/delivery", sharesStateInProcess: false),
            limits: Cases.noHistory)
        let reader = try await PreferencesStore(
            storage: EtcdStorage(
                configuration: configuration, key: "/bench/delivery", sharesStateInProcess: false),
            limits: Cases.noHistory)
        let delivery = try await deliveries(
            store: reader, count: rounds,
            write: { _, value in
                let start = wallClock()
                try await writer.set(.benchCounter, value)
                return start
            })
        let p50 = median(delivery)
        let p90 = percentile(delivery, 0.9)
        return Row(
            id: "P9", measure: "etcd (3 members): one set; delivery to another replica",
            ours:
                "set \(format(nanoseconds: median(sets))); delivery p50 \(format(nanoseconds: p50)), p90 \(format(nanoseconds: p90))",
            comparison: "one bare txn \(format(nanoseconds: median(transactions)))",
            ratio: ratio, target: "≤ 1.5×; p50 ≤ 10 ms", met: ratio <= 1.5 && p50 <= 10_000_000,
            detail: [
                "set_p50_ns": median(sets), "txn_p50_ns": median(transactions),
                "delivery_p50_ns": p50, "delivery_p90_ns": p90,
            ])
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs blocking work on a thread of its own (etcd calls block).
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

func executable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Three etcd members on loopback ports (``LocalEtcdMember``, as the
/// tests start theirs), each under `timeout` (so none outlives the
/// benchmark by more than ten minutes), stopped at the end.
final class BenchCluster {
    let endpoints: [URL]
    private var processes: [BenchChild] = []

    private var dataDirectory: URL?

    init(server: String, directory: URL) throws {
        // In memory where possible: the benchmark measures the client, not the disk.
        let base =
            FileManager.default.fileExists(atPath: "/dev/shm")
            ? URL(fileURLWithPath: "/dev/shm/prefs-bench-etcd-\(UUID().uuidString)") : directory
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        dataDirectory = base
        let members = try LocalEtcdMember.cluster(3, named: "b", in: base.path)
        endpoints = members.map(\.clientURL)
        let token = "bench-\(UUID().uuidString)"
        for member in members {
            let log = base.appendingPathComponent("\(member.name).log").path
            let (program, arguments) = member.command(
                server: server, cluster: members, token: token, lifetime: 600)
            processes.append(
                try BenchChild(program, arguments, output: .file(log), errors: .file(log)))
        }
        // Ready when a read goes through.
        do {
            let probe = try EtcdStorage(
                configuration: EtcdConfiguration(endpoints: endpoints, timeout: 20),
                key: "/bench/ready")
            _ = try probe.read()
        } catch {
            stop()
            throw error
        }
    }

    func stop() {
        for process in processes {
            if let server = LocalEtcdMember.server(underWrapper: process.pid) {
                kill(server, SIGKILL)
            }
            process.kill()
        }
        processes = []
        if let dataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }
}
