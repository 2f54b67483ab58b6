import Metrics
import Preferences
import Synchronization

/// The provider's metrics, made with the factory it is given. Every
/// metric has one dimension, `store`: the store's location (its file's
/// path, or its key in etcd), never a key or a value.
///
/// | name | kind | what it counts |
/// |---|---|---|
/// | `preferences_provider_writes_total` | counter | writes through the provider that were stored |
/// | `preferences_provider_write_errors_total` | counter | writes through the provider refused or failed |
/// | `preferences_provider_write_duration` | timer | how long each write through the provider took, to durable (nanoseconds) |
/// | `preferences_provider_write_conflicts_retried_total` | counter | writes of the store in this process that lost a compare-and-swap and were tried again |
/// | `preferences_provider_problems_total` | counter | problems that appeared in the store's list |
/// | `preferences_provider_feed_subscribers` | gauge | change feeds open on the store in this process |
/// | `preferences_provider_replicas_registered` | gauge | processes registered as replicas of the store |
final class ProviderMetrics: Sendable {
    static let prefix = "preferences_provider_"

    let writes: Counter
    let writeErrors: Counter
    let writeDuration: Metrics.Timer
    let conflictsRetried: Counter
    let problems: Counter
    let feedSubscribers: Gauge
    let replicas: Gauge
    /// The store's retried conflicts already counted.
    private let countedConflicts: Mutex<Int>

    init(factory: any MetricsFactory, location: String, conflictsSoFar: Int) {
        let dimensions = [("store", location)]
        func name(_ suffix: String) -> String { Self.prefix + suffix }
        writes = Counter(label: name("writes_total"), dimensions: dimensions, factory: factory)
        writeErrors = Counter(
            label: name("write_errors_total"), dimensions: dimensions, factory: factory)
        writeDuration = Metrics.Timer(
            label: name("write_duration"), dimensions: dimensions, factory: factory)
        conflictsRetried = Counter(
            label: name("write_conflicts_retried_total"), dimensions: dimensions, factory: factory)
        problems = Counter(label: name("problems_total"), dimensions: dimensions, factory: factory)
        feedSubscribers = Gauge(
            label: name("feed_subscribers"), dimensions: dimensions, factory: factory)
        replicas = Gauge(
            label: name("replicas_registered"), dimensions: dimensions, factory: factory)
        countedConflicts = Mutex(conflictsSoFar)
    }

    /// Records what the store reports now: its open feeds, and the
    /// conflicts it retried since the last sample.
    func sample(_ activity: PreferencesStoreActivity) {
        feedSubscribers.record(activity.feedSubscribers)
        let added = countedConflicts.withLock { counted -> Int in
            let added = activity.retriedWriteConflicts - counted
            counted = max(counted, activity.retriedWriteConflicts)
            return added
        }
        if added > 0 { conflictsRetried.increment(by: added) }
    }
}
