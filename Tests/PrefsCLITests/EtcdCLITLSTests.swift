import Foundation
import PreferencesTestSupport
import Testing

/// `prefs --etcd https://…` works as `--etcd http://…` does, through the
/// built `prefs`, which hands it to `prefs-tls`: the server is verified
/// against the system's trust store (E5), and commands, the environment's
/// endpoints and completion behave as over `http`.
@Suite(
    .serialized, .takesTurns(.clusters),
    .enabled(if: etcdAvailable, etcdUnavailableReason),
    .enabled(if: canTrustTestAuthority, testAuthorityUnavailableReason),
    .scaledTimeLimit(minutes: 5))
struct EtcdCLITLSTests {
    /// Runs the built `prefs` with PREFS_ETCD_* cleared and `environment` added.
    func prefs(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> ProcessOutput
    {
        try await runChild(
            "prefs", arguments,
            environment: cleanEnvironment().merging(environment) { _, given in given })
    }

    @Test func prefsWorksOnAnHTTPSEndpoint() async throws {
        let directory = try TemporaryDirectory()
        let tls = try await EtcdCluster.TLS.make(in: directory)
        let cluster = try await offPool { try EtcdCluster(size: 1, tls: tls) }
        let endpoint = cluster.endpointList
        #expect(endpoint.hasPrefix("https://"))
        let suite = "cli-tls-\(UUID().uuidString.prefix(8))"
        let etcd = ["--etcd", endpoint, "--suite", suite]

        // Refused in libcurl's words while the system does not trust the
        // server: the command reached TLS.
        let untrusted = try await prefs(etcd + ["get", "language"])
        #expect(untrusted.status == 5)
        #expect(
            untrusted.standardError.contains("SSL certificate problem"),
            "\(untrusted.standardError)")
        #expect(untrusted.standardError.split(separator: "\n").count == 1)

        try await withTrustedAuthority(tls.authority) {
            let set = try await prefs(etcd + ["set", "language", "fr"])
            #expect(set.status == 0, "\(set.standardError)")
            #expect(try await prefs(etcd + ["get", "language"]).line == "fr")
            let fromEnvironment = try await prefs(
                ["--suite", suite, "get", "language"],
                environment: ["PREFS_ETCD_ENDPOINTS": endpoint])
            #expect(fromEnvironment.line == "fr", "\(fromEnvironment.standardError)")
            let keys = try await prefs(etcd + ["completions", "--list", "keys"])
            #expect(keys.standardOutput == "language\n", "\(keys.standardError)")
            #expect(try await prefs(etcd + ["get", "--help"]).status == 0)
            let stored = try await offPool {
                try cluster.etcdctl(["get", "/prefs/\(suite)", "--print-value-only"])
            }
            #expect(stored.standardOutput.contains(#""language" : "fr""#))
        }
    }
}
