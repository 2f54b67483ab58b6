import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// The etcd backend keeps the storage contract (S12), against a real
/// one-member cluster; each check uses keys of its own. The two handles do
/// not share state, as two replicas on two machines would not.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 5))
struct EtcdStorageContractTests {
    @Test func theEtcdBackendKeepsTheContract() async throws {
        let cluster = try await SharedEtcd.cluster()
        try await StorageContract { _ in
            let key = uniqueKey("contract")
            let storage = try cluster.storage(key, sharesState: false)
            return StorageContract.Subject(
                storage: storage, otherHandle: try cluster.storage(key, sharesState: false),
                readSetAside: { place in
                    try EtcdStorage(configuration: storage.configuration, key: place).read().bytes
                }, offering: [.historyArchive, .manifests, .replicas])
        }.run()
    }
}
