import Foundation
import PreferencesTestSupport
import Testing

/// Shows in the test report whether the etcd tests ran: without the server
/// installed this suite, like every etcd suite, is skipped with the reason
/// (CI installs it and fails when etcd tests were skipped).
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 2))
struct EtcdAvailabilityTests {
    @Test func aSingleMemberClusterStartsAndElectsItself() async throws {
        let cluster = try await SharedEtcd.cluster()
        let leader = try await offPool { try cluster.leaderIndex() }
        #expect(leader == 0)
    }
}
