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

/// Whether a certificate authority can be made and trusted here: openssl,
/// Debian's update-ca-certificates, and root to run it.
let canTrustTestAuthority: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    && FileManager.default.isExecutableFile(atPath: "/usr/sbin/update-ca-certificates")
    && FileManager.default.fileExists(atPath: "/usr/local/share/ca-certificates")

/// `https://` endpoints are verified against the system's trust store (E5):
/// with a certificate authority the test creates, rejected until the system
/// trusts it, then used — and the authority removed again.
@Suite(
    .enabled(if: etcdAvailable, etcdUnavailableReason),
    .enabled(
        if: canTrustTestAuthority,
        "needs root, openssl and update-ca-certificates to trust a test authority"))
struct EtcdTLSTests {
    /// A CA and a server certificate for 127.0.0.1, made with openssl.
    func makeCertificates(in directory: TemporaryDirectory) async throws -> EtcdCluster.TLS {
        let ca = directory.file("ca").path
        let server = directory.file("server").path
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=Preferences test authority", "-keyout", ca + ".key",
                "-out", ca + ".crt",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", server + ".key", "-out", server + ".csr",
            ],
            [
                "x509", "-req", "-in", server + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
                "-CAcreateserial", "-days", "1", "-extfile", server + ".ext",
                "-out", server + ".crt",
            ],
        ]
        try write("subjectAltName=IP:127.0.0.1\n", to: directory.file("server.ext"))
        for step in steps {
            let result = try await offPool {
                try runBounded("/usr/bin/timeout", ["30", "/usr/bin/openssl"] + step)
            }
            guard result.status == 0 else {
                throw EtcdCluster.ClusterError(message: "openssl: \(result.standardError)")
            }
        }
        return EtcdCluster.TLS(
            certificate: server + ".crt", key: server + ".key", authority: ca + ".crt")
    }

    /// Puts the authority in the system's trust store until `body` returns.
    func trusting<T>(_ authority: String, _ body: () async throws -> T) async throws -> T {
        let name = "preferences-test-\(UUID().uuidString.prefix(8))"
        let installed = "/usr/local/share/ca-certificates/\(name).crt"
        try FileManager.default.copyItem(atPath: authority, toPath: installed)
        // Off the cooperative pool, as every tool this test runs.
        @Sendable func removeAuthority() {
            try? FileManager.default.removeItem(atPath: installed)
            // update-ca-certificates rebuilds the bundle but leaves the links
            // it made to the removed file: remove those too.
            let certificates = "/etc/ssl/certs"
            let link = "\(name).pem"
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: certificates)) ?? []
            where entry == link
                || (try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "\(certificates)/\(entry)")) == link
            {
                try? FileManager.default.removeItem(atPath: "\(certificates)/\(entry)")
            }
            _ = try? runBounded("/usr/bin/timeout", ["60", "/usr/sbin/update-ca-certificates"])
        }
        let result: T
        do {
            let added = try await offPool {
                try runBounded("/usr/bin/timeout", ["60", "/usr/sbin/update-ca-certificates"])
            }
            guard added.status == 0 else {
                throw EtcdCluster.ClusterError(
                    message: "update-ca-certificates: \(added.standardError)")
            }
            result = try await body()
        } catch {
            _ = try? await offPool { removeAuthority() }
            throw error
        }
        _ = try? await offPool { removeAuthority() }
        return result
    }

    @Test func anHTTPSEndpointIsRefusedUntilTheSystemTrustsItsAuthority() async throws {
        let directory = try TemporaryDirectory()
        let tls = try await makeCertificates(in: directory)
        let cluster = try await offPool { try EtcdCluster(size: 1, tls: tls) }
        #expect(cluster.endpoints[0].scheme == "https")
        let key = uniqueKey("tls")

        await #expect {
            _ = try await PreferencesStore(storage: cluster.storage(key, timeout: 2))
        } throws: { error in
            guard case PreferencesError.io(_, _, _, let message) = error else { return false }
            // On Linux, URLSession reports the untrusted server as a time-out
            // (NSURLErrorDomain -1001), not as a certificate error.
            return message.contains(cluster.endpoints[0].absoluteString)
        }

        try await trusting(tls.authority) {
            let store = try await PreferencesStore(storage: cluster.storage(key, timeout: 5))
            let feed = FeedRecorder(store.changes(.counter))
            #expect(await feed.next(0) == 0)
            try await store.set(.counter, 1)
            let put = try await offPool {
                try cluster.etcdctl(["put", key], input: storeFile(#"{ "counter" : 2 }"#))
            }
            #expect(put.status == 0)
            #expect(await feed.next(2) == 2, "the watch works over https")

            // A member that stops answering (SIGSTOP keeps its connections
            // open): an https call ends at the timeout with one clear line,
            // and all works again, with no reopen, once it answers.
            let bounded = try await PreferencesStore(
                storage: cluster.storage(key, timeout: 5, sharesState: false))
            try await offPool { cluster.pause(0) }
            let started = Date()
            await #expect {
                try await bounded.set(.counter, 3)
            } throws: { error in
                guard case PreferencesError.io(_, _, _, let message) = error else {
                    return false
                }
                return message.contains(cluster.endpoints[0].absoluteString)
                    && !"\(error)".contains("\n")
            }
            let waited = Date().timeIntervalSince(started)
            // A set is up to three calls of at most 5 s each (a read, the
            // transaction, and the read that looks for a lost answer's
            // outcome): bounded, never a hang.
            #expect(waited < 25, "the call gave up after \(waited) s")
            #expect(bounded[.counter] == 2, "reads keep the last known state")
            try await offPool { cluster.resume(0) }
            try await bounded.set(.counter, 4)
            #expect(await feed.next(4) == 4)

            // Killed while the watch streams and a call may be in flight (sent
            // to the stopped member, or not yet): the call fails with one
            // line, the process goes on, and the store works again, with no
            // reopen, once the member is back.
            try await offPool { cluster.pause(0) }
            let inFlight = Task { try await bounded.set(.counter, 5) }
            try await offPool { cluster.kill(0) }
            let result = await inFlight.result
            guard case .failure(PreferencesError.io(_, _, _, let message)) = result else {
                Issue.record("expected an .io error, got \(result)")
                return
            }
            #expect(message.contains(cluster.endpoints[0].absoluteString), "\(message)")
            #expect(!message.contains("\n"))
            try await offPool { try cluster.restart(0) }
            try await bounded.set(.counter, 6)
            #expect(await feed.next(6, timeout: .seconds(30)) == 6, "the watch came back")
        }
    }
}
