import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences
@testable import PreferencesEtcd

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a certificate authority can be made and trusted here: openssl,
/// Debian's update-ca-certificates (run under flock), and root to run it.
let canTrustTestAuthority: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    && FileManager.default.isExecutableFile(atPath: SystemTrustStore.update)
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")
    && FileManager.default.fileExists(atPath: SystemTrustStore.authorities)

/// `https://` endpoints are verified against the system's trust store (E5):
/// with a certificate authority the test creates, rejected until the system
/// trusts it, then used — and the authority removed again.
@Suite(
    .serialized, .takesTurns(.clusters),
    .enabled(if: etcdAvailable, etcdUnavailableReason),
    .enabled(
        if: canTrustTestAuthority,
        "needs root, openssl, flock and update-ca-certificates to trust a test authority"),
    .scaledTimeLimit(minutes: 5))
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

    /// Trusts `authority` system-wide for the length of `body`, and takes
    /// it out again whatever `body` does: returns, throws, or runs out of
    /// time (the removal runs off the task, so a cancelled test still
    /// waits for it). Then it checks that the system bundle no longer holds
    /// the authority, and records an issue if it does or the removal failed.
    ///
    /// The system's store is the only way to trust a test authority here.
    /// On Linux, `URLSession` hands `https` to libcurl, which checks the
    /// server against the system bundle. A session cannot be told to trust
    /// more: swift-corelibs-foundation has no server-trust challenge (a
    /// protection space's `serverTrust` is unavailable there), and the
    /// variables that could name another CA file (`SSL_CERT_FILE`,
    /// `CURL_CA_BUNDLE`, `URLSessionCertificateAuthorityInfoFile`) change
    /// nothing: with each, the server stayed untrusted.
    func withTrustedAuthority<T: Sendable>(
        _ authority: String, _ body: () async throws -> T
    ) async throws -> T {
        let name = SystemTrustStore.prefix + UUID().uuidString.prefix(8).lowercased()
        let outcome: Result<T, any Error>
        do {
            try await offPool { try SystemTrustStore.add(authority, as: name) }
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        do {
            try await offPool { try SystemTrustStore.remove(authority, as: name) }
        } catch {
            Issue.record("the test authority \(name) may still be trusted: \(error)")
        }
        return try outcome.get()
    }

    @Test func anHTTPSEndpointIsRefusedUntilTheSystemTrustsItsAuthority() async throws {
        let directory = try TemporaryDirectory()
        let tls = try await makeCertificates(in: directory)
        let cluster = try await offPool { try EtcdCluster(size: 1, tls: tls) }
        #expect(cluster.endpoints[0].scheme == "https")
        let key = uniqueKey("tls")

        // Refused for the certificate alone: libcurl's words for a chain that
        // reaches no trusted authority, from a member that is up and serving.
        do {
            _ = try await PreferencesStore(storage: cluster.storage(key, timeout: 5))
            Issue.record("a store opened on an https endpoint the system does not trust")
        } catch PreferencesError.io(_, _, _, let message) {
            let member = cluster.endpoints[0].absoluteString
            #expect(
                message.contains(
                    "\(member) (SSL certificate problem: unable to get local issuer certificate)"),
                "\(message)")
        }
        _ = try await offPool { try cluster.etcdctlChecked(["endpoint", "health"]) }

        try await withTrustedAuthority(tls.authority) {
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

/// How an `https` request's failure is worded: its own time-out, which is
/// what was left of the call's, reads as every other time-out does, so the
/// call's error keeps an endpoint's earlier, more telling answer (an
/// untrusted certificate) instead of URLSession's words for the time-out.
@Suite(.scaledTimeLimit(minutes: 1))
struct EtcdHTTPSFailureTests {
    @Test func aRequestsOwnTimeOutReadsAsTimedOut() {
        let answer = URLSessionTransport.failure(
            NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut))
        guard case .transport(let message, let sent) = answer else {
            Issue.record("a failure gave \(answer)")
            return
        }
        #expect(message == "timed out")
        #expect(sent, "a request that timed out may have reached the member")
    }

    @Test func anUntrustedCertificateKeepsLibcurlsWords() {
        let untrusted = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorUnknown,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "SSL certificate problem: unable to get local issuer certificate"
            ])
        guard case .transport(let message, _) = URLSessionTransport.failure(untrusted) else {
            Issue.record("a failure gave a reply")
            return
        }
        #expect(message == "SSL certificate problem: unable to get local issuer certificate")
    }
}

/// Debian's system trust store: authorities in `/usr/local/share/ca-certificates`,
/// gathered into one bundle by `update-ca-certificates`.
enum SystemTrustStore {
    static let authorities = "/usr/local/share/ca-certificates"
    static let certificates = "/etc/ssl/certs"
    static let bundle = "/etc/ssl/certs/ca-certificates.crt"
    static let update = "/usr/sbin/update-ca-certificates"
    /// The name of every authority these tests add.
    static let prefix = "preferences-test-"
    /// Held while the bundle is rebuilt, so that test processes running side
    /// by side never rebuild it at once.
    static let lock = "/run/lock/preferences-test-trust-store.lock"
    /// Older than any test: left by a run that died before it could take it out.
    static let staleAfter: TimeInterval = 30 * 60

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Adds `authority` (a PEM file) as `name` and checks that the bundle holds it.
    static func add(_ authority: String, as name: String) throws {
        try removeStale()
        try FileManager.default.copyItem(atPath: authority, toPath: installed(name))
        try rebuild()
        guard try bundleHolds(authority) else {
            throw Failure(description: "update-ca-certificates did not add \(name) to \(bundle)")
        }
    }

    /// Takes `name` out (its file and the links to it), rebuilds the
    /// bundle, and checks that it no longer holds `authority`.
    static func remove(_ authority: String, as name: String) throws {
        try removeFiles(name)
        try rebuild()
        guard try !bundleHolds(authority) else {
            throw Failure(description: "\(bundle) still holds \(name) after its removal")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: certificates).filter {
            $0.hasPrefix(name)
        }
        guard left.isEmpty, !FileManager.default.fileExists(atPath: installed(name)) else {
            throw Failure(description: "\(name) left behind: \(left)")
        }
    }

    private static func installed(_ name: String) -> String { "\(authorities)/\(name).crt" }

    /// The authority's file and every link in the certificates folder to it
    /// (update-ca-certificates rebuilds the bundle but leaves the links).
    private static func removeFiles(_ name: String) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: installed(name)) {
            try manager.removeItem(atPath: installed(name))
        }
        let link = "\(name).pem"
        for entry in try manager.contentsOfDirectory(atPath: certificates) {
            let path = "\(certificates)/\(entry)"
            // nil for an entry that is not a link.
            let target = try? manager.destinationOfSymbolicLink(atPath: path)
            if entry == link || target == link || target == installed(name) {
                try manager.removeItem(atPath: path)
            }
        }
    }

    /// Authorities of these tests older than any test run.
    private static func removeStale() throws {
        let manager = FileManager.default
        for entry in try manager.contentsOfDirectory(atPath: authorities)
        where entry.hasPrefix(prefix) && entry.hasSuffix(".crt") {
            let modified =
                try manager.attributesOfItem(atPath: "\(authorities)/\(entry)")[
                    .modificationDate] as? Date
            if let modified, -modified.timeIntervalSinceNow > staleAfter {
                try removeFiles(String(entry.dropLast(".crt".count)))
            }
        }
    }

    private static func rebuild() throws {
        let result = try runBounded(
            "/usr/bin/timeout",
            ["--signal=KILL", "120", "/usr/bin/flock", "-w", "100", lock, update])
        guard result.status == 0 else {
            throw Failure(
                description:
                    "update-ca-certificates exited with \(result.status): \(result.standardError)")
        }
    }

    /// Whether the bundle holds the certificate in the PEM file `authority`.
    private static func bundleHolds(_ authority: String) throws -> Bool {
        let squeezed = { (text: String) in text.filter { !$0.isWhitespace } }
        let pem = try String(contentsOfFile: authority, encoding: .utf8)
        let body = squeezed(
            pem.replacingOccurrences(of: "-----BEGIN CERTIFICATE-----", with: "")
                .replacingOccurrences(of: "-----END CERTIFICATE-----", with: ""))
        guard !body.isEmpty else { throw Failure(description: "no certificate in \(authority)") }
        return squeezed(try String(contentsOfFile: bundle, encoding: .utf8)).contains(body)
    }
}
