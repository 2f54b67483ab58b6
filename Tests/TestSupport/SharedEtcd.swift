import Foundation
import Preferences
import PreferencesTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A key unique to one test.
package func uniqueKey(_ name: String = "store") -> String {
    "/prefs-test/\(name)-\(UUID().uuidString.prefix(8))"
}

/// One single-member cluster shared by the tests that need nothing but a
/// working etcd (each uses its own keys); stopped when the test process exits.
package enum SharedEtcd {
    /// Held while the cluster starts, so the tests that ask meanwhile wait for it.
    private static let shared = Locked<EtcdCluster?>(nil)

    package static func cluster() async throws -> EtcdCluster {
        try await offPool {
            try shared.withLock { shared in
                if let shared { return shared }
                let cluster = try EtcdCluster(size: 1, lifetime: 3_600)
                shared = cluster
                atexit { SharedEtcd.stop() }
                return cluster
            }
        }
    }

    private static func stop() {
        guard let cluster = shared.value else { return }
        cluster.stopAll()
        // Process exit runs no deinit: remove the data directory here.
        try? FileManager.default.removeItem(at: cluster.directory.url)
    }
}
