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

/// etcd users and roles (E5) on a real member with authentication on and
/// short-lived simple tokens (a few seconds of idleness).
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 3))
struct EtcdAuthTests {
    /// A member with root, a `writer` (read-write on the test prefix) and a
    /// `reader` (read only), and authentication enabled; a step that fails
    /// fails the test with what `etcdctl` printed. A token expires after
    /// `tokenTTL` seconds unused.
    func securedCluster(tokenTTL: Int = 2) async throws -> EtcdCluster {
        try await offPool {
            let cluster = try EtcdCluster(
                size: 1,
                extraArguments: ["--auth-token", "simple", "--auth-token-ttl", "\(tokenTTL)"])
            try cluster.enableAuthentication()
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

    /// The store signs in once and reuses its token; it signs in again,
    /// once, only when etcd has revoked the token (a password change) or let
    /// it expire, and the call that met the dead token still succeeds.
    @Test func theTokenIsReusedAndSignedInAgainOnlyWhenRevokedOrExpired() async throws {
        // etcd lets a token expire after this long unused. A busy run may
        // pause longer between two calls; the checks count every token etcd
        // refused, so such an expiry is accounted for, not taken for a
        // sign-in too many.
        let tokenTTL = 4
        let cluster = try await securedCluster(tokenTTL: tokenTTL)
        // Every call goes through the relay, which counts the sign-ins as
        // sent and etcd's refusals of a token.
        let relay = try CountingRelay(to: cluster.endpoints[0])
        defer { relay.stop() }
        let key = uniqueKey()
        let storage = try EtcdStorage(
            configuration: EtcdConfiguration(
                endpoints: [relay.url],
                credentials: EtcdCredentials(user: "writer", password: "writerpw")),
            key: key, sharesStateInProcess: false)
        // No live reads and no feed: no watch, only the store's own calls.
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        let signIns = { relay.requests(to: "/v3/auth/authenticate") }
        let refusals = { relay.requests(to: CountingRelay.rejected) }
        // The client signs in once, and once more for each token etcd refused.
        try await store.set(.counter, 1)
        try await store.set(.counter, 2)
        #expect(storage.activeWatchCount == 0)
        #expect(signIns() == 1 + refusals(), "the open and two sets: \(relay.counts)")
        let first = try #require(storage.client.token, "no token after signing in")
        let refusedBefore = refusals()
        try await store.set(.counter, 3)
        if refusals() == refusedBefore {
            #expect(storage.client.token == first, "the token is reused")
        }
        #expect(signIns() == 1 + refusals(), "\(relay.counts)")

        // A password change, even to the same password, revokes the user's tokens.
        _ = try await offPool {
            try cluster.etcdctlChecked(
                ["user", "passwd", "writer", "--interactive=false"], input: "writerpw\n",
                user: EtcdCluster.rootUser)
        }
        let current = try #require(storage.client.token)
        #expect(try await isRejected(current, by: cluster, key), "the token was not revoked")
        let refusedBeforeRevocation = refusals()
        try await store.set(.counter, 4)
        #expect(refusals() > refusedBeforeRevocation, "the revoked token was never sent")
        #expect(signIns() == 1 + refusals(), "after the revocation: \(relay.counts)")
        let second = try #require(storage.client.token, "no token after signing in again")
        #expect(second != current)
        try await store.set(.counter, 5)
        #expect(signIns() == 1 + refusals(), "\(relay.counts)")

        let latest = try #require(storage.client.token)
        try await waitUntilExpired(latest, cluster, key, tokenTTL: tokenTTL)
        let refusedBeforeExpiry = refusals()
        try await store.set(.counter, 6)
        #expect(refusals() > refusedBeforeExpiry, "the expired token was never sent")
        #expect(signIns() == 1 + refusals(), "after the expiry: \(relay.counts)")
        #expect(storage.client.token != latest)
        try await store.set(.counter, 7)
        #expect(signIns() == 1 + refusals(), "\(relay.counts)")

        let stored = try await offPool {
            try cluster.etcdctlChecked(
                ["get", key, "--print-value-only"], user: EtcdCluster.rootUser)
        }
        #expect(stored.standardOutput.contains("\"counter\" : 7"), "\(stored.standardOutput)")
    }

    /// Whether etcd refuses `token` as invalid (revoked or expired); any
    /// other refusal throws with etcd's reply. Using a valid token renews it.
    func isRejected(_ token: String, by cluster: EtcdCluster, _ key: String) async throws -> Bool {
        let (status, said) = try await offPool {
            let reply = try cluster.post(
                0, "/v3/kv/range", ["key": EtcdClient.base64(key)], token: token)
            return (reply.status, "\(reply.json)")
        }
        if status == 200 { return false }
        guard said.contains("invalid auth token") else {
            throw EtcdCluster.ClusterError(message: "a read with the token: HTTP \(status) \(said)")
        }
        return true
    }

    /// Waits until etcd lets `token` expire. A simple token expires once it
    /// has not been used for `--auth-token-ttl` (checked once a second) and
    /// every use renews it, so no event tells when: look after the TTL and
    /// 1.5 s more unused, again after each look, for at most 40 s.
    func waitUntilExpired(
        _ token: String, _ cluster: EtcdCluster, _ key: String, tokenTTL: Int
    ) async throws {
        let deadline = TestTime.deadline(in: .seconds(40))
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .seconds(tokenTTL) + .milliseconds(1_500))
            if try await isRejected(token, by: cluster, key) { return }
        }
        throw EtcdCluster.ClusterError(
            message: "etcd still took the store's token 40 s after its last use (TTL \(tokenTTL) s)"
        )
    }
}
