import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// etcd users and roles (E5) on a real member with authentication on and
/// short-lived simple tokens (2 s of idleness).
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason))
struct EtcdAuthTests {
    static let prefix = "/prefs-test/"

    /// A member with root, a `writer` (read-write on the test prefix) and a
    /// `reader` (read only), and authentication enabled.
    func securedCluster() async throws -> EtcdCluster {
        try await offPool {
            let cluster = try EtcdCluster(
                size: 1, extraArguments: ["--auth-token", "simple", "--auth-token-ttl", "2"])
            let steps: [[String]] = [
                ["user", "add", "root:rootpw"],
                ["user", "grant-role", "root", "root"],
                ["role", "add", "writer"],
                ["role", "grant-permission", "writer", "readwrite", Self.prefix, "--prefix=true"],
                ["role", "add", "reader"],
                ["role", "grant-permission", "reader", "read", Self.prefix, "--prefix=true"],
                ["user", "add", "writer:writerpw"],
                ["user", "grant-role", "writer", "writer"],
                ["user", "add", "reader:readerpw"],
                ["user", "grant-role", "reader", "reader"],
                ["auth", "enable"],
            ]
            for step in steps {
                let result = try cluster.etcdctl(step)
                // root may already hold the root role.
                if result.status != 0 && step[1] != "grant-role" {
                    throw EtcdCluster.ClusterError(
                        message: "etcdctl \(step.joined(separator: " ")): \(result.standardError)")
                }
            }
            return cluster
        }
    }

    func open(_ cluster: EtcdCluster, _ key: String, user: String?, password: String)
        async throws -> PreferencesStore
    {
        let credentials = user.map { EtcdCredentials(user: $0, password: password) }
        return try await PreferencesStore(
            storage: cluster.storage(key, credentials: credentials, sharesState: false))
    }

    @Test func aWrongPasswordOrNoUserIsAClearErrorNotAnEmptyStore() async throws {
        let cluster = try await securedCluster()
        let key = uniqueKey()
        let writer = try await open(cluster, key, user: "writer", password: "writerpw")
        try await writer.set(.counter, 1)

        await #expect {
            _ = try await open(cluster, key, user: "writer", password: "wrong")
        } throws: { error in
            guard case PreferencesError.io(_, _, let code, _) = error else { return false }
            let text = "\(error)"
            return code == EACCES && text.contains("writer")
                && text.contains(cluster.endpoints[0].absoluteString)
                && text.contains("authentication failed") && !text.contains("\n")
        }
        await #expect {
            _ = try await open(cluster, key, user: nil, password: "")
        } throws: { error in
            guard case PreferencesError.io(_, _, let code, let message) = error else {
                return false
            }
            return code == EACCES && message.contains("PREFS_ETCD_USER")
        }
    }

    @Test func aUserWithoutWritePermissionGetsAClearErrorOnSet() async throws {
        let cluster = try await securedCluster()
        let key = uniqueKey()
        let writer = try await open(cluster, key, user: "writer", password: "writerpw")
        try await writer.set(.language, "fr")
        let reader = try await open(cluster, key, user: "reader", password: "readerpw")
        #expect(reader[.language] == "fr")
        await #expect {
            try await reader.set(.language, "de")
        } throws: { error in
            guard case PreferencesError.io(let operation, let path, let code, let message) = error
            else { return false }
            return operation == "write" && path == key && code == EACCES
                && message.contains("'reader'") && message.contains("permission denied")
        }
        #expect(reader[.language] == "fr")
        let check = try await open(cluster, key, user: "writer", password: "writerpw")
        #expect(check[.language] == "fr")
    }

    @Test func anExpiredTokenIsRefreshedTransparently() async throws {
        let cluster = try await securedCluster()
        let key = uniqueKey()
        let store = try await open(cluster, key, user: "writer", password: "writerpw")
        try await store.set(.counter, 1)
        // A token taken after the store's last call expires after the store's.
        let probe = try await offPool {
            try cluster.post(
                0, "/v3/auth/authenticate", ["name": "writer", "password": "writerpw"]
            )
            .json["token"] as? String
        }
        let token = try #require(probe)
        // Tokens expire after 2 s unused (checked once a second); using one
        // renews it, so look only after that long, then every 1.5 s.
        var expired = false
        for _ in 0..<6 where !expired {
            try await Task.sleep(for: .milliseconds(2_500))
            let answer = try await offPool {
                let reply = try cluster.post(
                    0, "/v3/kv/range", ["key": Data(key.utf8).base64EncodedString()], token: token)
                return "\(reply.json)"
            }
            expired = answer.contains("invalid auth token")
        }
        try #require(expired, "the test token never expired")
        try await store.set(.counter, 2)
        #expect(store[.counter] == 2)
        let check = try await open(cluster, key, user: "writer", password: "writerpw")
        #expect(check[.counter] == 2)
    }
}
