import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// A cancelled etcd watch calls its handler no more once `cancel()` has
/// returned (<doc:ImplementingAStorageBackend>), even for what was on its way.
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 3))
struct EtcdWatchCancelTests {
    /// The watch's first read is held up by a stopped member (the relay has
    /// counted it, so it is on its way) while the watch is cancelled; the
    /// member then answers. Once the watch's queue has run everything
    /// queued so far, which includes acting on that answer, the handler
    /// must not have been called since `cancel()` returned.
    @Test func aWatchCancelledWhileItsFirstReadIsOnItsWayCallsNoHandlerAfterward() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 1) }
        let relay = try CountingRelay(to: cluster.endpoints[0])
        defer { relay.stop() }
        let storage = try EtcdStorage(
            configuration: EtcdConfiguration(endpoints: [relay.url]), key: uniqueKey("cancel"),
            sharesStateInProcess: false)
        let cancelled = Locked(false)
        let late = Locked<[String]>([])
        let reads: @Sendable () -> Int = { relay.requests(to: "/v3/kv/range") }
        let before = reads()
        cluster.pause(0)
        defer { cluster.resume(0) }
        let watch = try #require(
            try storage.watch { event in
                if cancelled.withLock({ $0 }) { late.withLock { $0.append("\(event)") } }
            })
        let stream = try #require(watch as? EtcdWatchStream)
        try await withDeadline("the watch's first read to reach the relay") {
            while reads() == before { try await Task.sleep(for: .milliseconds(5)) }
        }
        watch.cancel()
        cancelled.withLock { $0 = true }
        cluster.resume(0)
        try await onOwnThread("the watch's queued work") { stream.queue.sync {} }
        #expect(
            late.withLock { $0 }.isEmpty,
            "the handler was called after cancel() had returned: \(late.withLock { $0 })")
    }
}
