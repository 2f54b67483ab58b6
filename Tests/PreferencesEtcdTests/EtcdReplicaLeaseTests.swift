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

/// A replica's registration outlives the loss of its lease (F2,
/// <doc:RollingOutAChange>): every keep-alive goes through a relay that
/// counts it, so the test knows when the registration has looked at its
/// lease, instead of waiting for a registration that may never come.
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 3))
struct EtcdReplicaLeaseTests {
    /// A registration whose lease is gone (it ran out while the process was
    /// stopped; here it is revoked, which etcd answers alike) is made again
    /// with a new lease by the first keep-alive that finds it gone. The
    /// keep-alives are sent one after another, each after the one before
    /// was answered and acted on, so once a second one has gone out the
    /// registration must be back.
    @Test func aRegistrationWhoseLeaseIsGoneIsMadeAgainByTheNextKeepAlive() async throws {
        let cluster = try await offPool { try EtcdCluster(size: 1) }
        let relay = try CountingRelay(to: cluster.endpoints[0])
        defer { relay.stop() }
        let key = uniqueKey("lease")
        var configuration = EtcdConfiguration(endpoints: [relay.url])
        configuration.replicaTTL = 3
        let store = try await PreferencesStore(etcd: configuration, key: key)
        await store.registeredAsReplica()
        let place = key + "/replicas/\(Platform.hostName)-\(getpid())"
        let lease = { @Sendable () async throws -> PreferenceValue? in
            try await offPool {
                let range = try cluster.post(0, "/v3/kv/range", ["key": EtcdClient.base64(place)])
                return range.json["kvs"]?.arrayValue?.first?["lease"]
            }
        }
        let first = try #require(try await lease(), "no registration at \(place)")
        let revoked = try await offPool { try cluster.post(0, "/v3/lease/revoke", ["ID": first]) }
        #expect(revoked.status == 200, "revoking the lease: \(revoked.json)")
        // A keep-alive may already have found the lease gone and registered
        // again (a slow run): never under the revoked lease.
        let afterRevoke = try await lease()
        #expect(afterRevoke != first, "the registration outlived its revoked lease")

        let keepAlives: @Sendable () -> Int = { relay.requests(to: "/v3/lease/keepalive") }
        let before = keepAlives()
        try await withDeadline("two keep-alives after the lease was revoked (\(relay.counts))") {
            while keepAlives() < before + 2 { try await Task.sleep(for: .milliseconds(20)) }
        }
        let second = try await lease()
        #expect(second != nil, "a keep-alive found the lease gone and did not register again")
        #expect(second != first, "registered again under the revoked lease")
        await store.close()
    }
}
