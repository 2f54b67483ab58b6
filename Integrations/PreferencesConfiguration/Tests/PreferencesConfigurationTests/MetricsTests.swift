import Configuration
import Foundation
import Metrics
import MetricsTestKit
import Preferences
import Synchronization
import Testing

@testable import PreferencesConfiguration

extension PreferenceKeys {
    fileprivate static let workers = PreferenceKey<Int>("http.workers", default: 1)
}

/// The provider's metrics, as a metrics backend receives them.
@Suite struct MetricsTests {
    static func name(_ suffix: String) -> String { "preferences_provider_" + suffix }

    @Test func writesTheirLatencyAndRefusalsAreCounted() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try FileStorage(fileURL: file).manifests!.publish(
            Array(PreferencesManifest(entries: ["http.port": .init(type: .int)]).jsonText.utf8),
            program: "billing")
        let metrics = TestMetrics()
        let provider = PreferencesProvider(store: store, metrics: metrics)
        let store_ = [("store", store.location)]
        try await provider.setValue(9090, forKey: "http.port")
        try await provider.setValue(9091, forKey: "http.port")
        await #expect(throws: PreferencesError.self) {
            try await provider.setValue("eighty", forKey: "http.port")
        }
        // Each metric carries one dimension, `store`, the store's location.
        let labels = Set(metrics.counters.map(\.label) + metrics.timers.map(\.label))
        #expect(
            labels.isSuperset(of: [
                Self.name("writes_total"), Self.name("write_errors_total"),
                Self.name("write_duration"),
            ]), "\(labels)")
        for dimensions in metrics.counters.map(\.dimensions) + metrics.timers.map(\.dimensions) {
            #expect(dimensions.map(\.0) == ["store"])
            #expect(dimensions.map(\.1) == [store.location])
        }
        #expect(try metrics.expectCounter(Self.name("writes_total"), store_).totalValue == 2)
        #expect(try metrics.expectCounter(Self.name("write_errors_total"), store_).totalValue == 1)
        let latency = try metrics.expectTimer(Self.name("write_duration"), store_)
        #expect(latency.values.count == 3)
        #expect(latency.values.allSatisfy { $0 > 0 })
    }

    @Test func retriedConflictsAreCounted() async throws {
        let storage = LosingStorage(InMemoryStorage())
        let store = try await PreferencesStore(storage: storage)
        try await store.edit { $0[raw: "http.port"] = 8080 }
        let metrics = TestMetrics()
        let provider = PreferencesProvider(store: store, metrics: metrics)
        storage.arm(losses: 3)
        try await provider.setValue(4, forKey: "http.workers")
        let retried = try metrics.expectCounter(
            Self.name("write_conflicts_retried_total"), [("store", store.location)])
        #expect(retried.totalValue == 3)
    }

    @Test func problemsThatAppearAreCounted() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let metrics = TestMetrics()
        let provider = PreferencesProvider(store: store, metrics: metrics)
        try await store.edit { $0[raw: "http.workers"] = "many" }
        #expect(store[.workers] == 1)
        let problems = try metrics.expectCounter(
            Self.name("problems_total"), [("store", store.location)])
        try await eventually("the problem to be counted") { problems.totalValue == 1 }
        _ = provider
    }

    @Test func gaugesFollowFeedsAndRegisteredReplicas() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.workers"] = 4 }
        await store.registeredAsReplica()
        let metrics = TestMetrics()
        let provider = PreferencesProvider(
            store: store, metrics: metrics, refreshInterval: .milliseconds(20))
        let dimensions = [("store", store.location)]
        let feeds = store.changes()
        let gauge = { try metrics.expectGauge(Self.name("feed_subscribers"), dimensions).lastValue }
        // This feed, and the provider's own two (the store's states, its problems).
        try await eventually("the feed gauge to count the open feeds") {
            let recorded = try gauge()
            let open = store.activity.feedSubscribers
            return open >= 3 && recorded == Double(open)
        }
        let open = store.activity.feedSubscribers
        try await eventually("the replica gauge to count this process") {
            try metrics.expectGauge(Self.name("replicas_registered"), dimensions).lastValue == 1
        }
        _ = consume feeds
        try await eventually("the feed gauge to drop the ended feed") {
            try gauge() == Double(open - 1)
        }
        _ = provider
    }

    @Test func noMetricCarriesAKeyOrAValueInItsDimensions() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let metrics = TestMetrics()
        let provider = PreferencesProvider(
            store: store, secretKeys: ["api.token"], metrics: metrics,
            refreshInterval: .milliseconds(20))
        try await provider.setValue("hunter2-token", forKey: "api.token")
        try await store.edit { $0[raw: "http.workers"] = "many" }
        #expect(store[.workers] == 1)
        let problems = try metrics.expectCounter(
            Self.name("problems_total"), [("store", store.location)])
        try await eventually("the problem to be counted") { problems.totalValue == 1 }
        let dimensions =
            metrics.counters.map(\.dimensions) + metrics.timers.map(\.dimensions)
            + metrics.recorders.map(\.dimensions)
        #expect(dimensions.count >= 7)
        for each in dimensions {
            #expect(each.map(\.0) == ["store"])
            #expect(each.map(\.1) == [store.location])
            #expect(!each.contains { $0.1.contains("hunter2") })
        }
    }
}

/// A backend whose next `losses` writes, once armed, lose their
/// compare-and-swap to a rewrite of what is stored made just before them,
/// as another writer's would.
final class LosingStorage: PreferencesStorage {
    let base: InMemoryStorage
    private let remaining: Mutex<Int>

    init(_ base: InMemoryStorage) {
        self.base = base
        self.remaining = Mutex(0)
    }

    /// Makes the next `losses` writes lose.
    func arm(losses: Int) { remaining.withLock { $0 = losses } }

    var location: String { base.location }
    var tuning: StorageTuning { base.tuning }
    var historyArchive: (any HistoryArchive)? { base.historyArchive }
    var manifests: (any ManifestPublishing)? { base.manifests }
    var replicas: (any ReplicaRegistry)? { base.replicas }
    var privacy: (any StoragePrivacy)? { base.privacy }
    func read() throws -> StoredContents { try base.read() }
    func currentRevision() throws -> StorageRevision { try base.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        let lose = remaining.withLock { remaining -> Bool in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        if lose, let current = try? base.read(), let stored = current.bytes {
            _ = try base.write(stored, ifRevision: current.revision)
        }
        return try base.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try base.withExclusiveAccess(body)
    }
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try base.setAsideCorrupt(contents, stamp: stamp)
    }
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        try base.watch(onEvent)
    }
}
