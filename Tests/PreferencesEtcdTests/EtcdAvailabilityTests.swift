import Foundation
import PreferencesTestSupport
import Testing

@testable import PreferencesEtcd

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

    /// The check a quiet watch makes of its member: a member id is a uint64,
    /// and about half of them are past Int64.max.
    @Test func aHealthyMemberPassesTheWatchsHealthCheckWhateverItsID() async throws {
        let cluster = try await SharedEtcd.cluster()
        let storage = try cluster.storage(uniqueKey("health"), sharesState: false)
        let (problem, leader) = try await offPool {
            (storage.client.checkHealth(of: cluster.endpoints[0]), cluster.status(0)?.leader)
        }
        #expect(problem == nil, "leader \(leader ?? "unknown")")
    }
}
