import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a certificate authority can be made and trusted here: openssl,
/// Debian's update-ca-certificates (run under flock), and root to run it.
package let canTrustTestAuthority: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    && FileManager.default.isExecutableFile(atPath: SystemTrustStore.update)
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")
    && FileManager.default.fileExists(atPath: SystemTrustStore.authorities)

/// Why the suites that trust a test authority cannot run here.
package let testAuthorityUnavailableReason: Comment =
    "needs root, openssl, flock and update-ca-certificates to trust a test authority"

extension EtcdCluster.TLS {
    /// A CA and a server certificate for 127.0.0.1, made with openssl.
    package static func make(in directory: TemporaryDirectory) async throws -> EtcdCluster.TLS {
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
                try ChildCommand(program: "/usr/bin/timeout", ["30", "/usr/bin/openssl"] + step)
                    .runBlocking()
            }
            guard result.status == 0 else {
                throw EtcdCluster.ClusterError(message: "openssl: \(result.standardError)")
            }
        }
        return EtcdCluster.TLS(
            certificate: server + ".crt", key: server + ".key", authority: ca + ".crt")
    }
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
package func withTrustedAuthority<T: Sendable>(
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

/// Debian's system trust store: authorities in `/usr/local/share/ca-certificates`,
/// gathered into one bundle by `update-ca-certificates`.
package enum SystemTrustStore {
    package static let authorities = "/usr/local/share/ca-certificates"
    package static let certificates = "/etc/ssl/certs"
    package static let bundle = "/etc/ssl/certs/ca-certificates.crt"
    package static let update = "/usr/sbin/update-ca-certificates"
    /// The name of every authority these tests add.
    package static let prefix = "preferences-test-"
    /// Held while the bundle is rebuilt, so that test processes running side
    /// by side never rebuild it at once.
    package static let lock = "/run/lock/preferences-test-trust-store.lock"
    /// Older than any test: left by a run that died before it could take it out.
    package static let staleAfter: TimeInterval = 30 * 60

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Adds `authority` (a PEM file) as `name` and checks that the bundle holds it.
    package static func add(_ authority: String, as name: String) throws {
        try removeStale()
        try FileManager.default.copyItem(atPath: authority, toPath: installed(name))
        try rebuild()
        guard try bundleHolds(authority) else {
            throw Failure(description: "update-ca-certificates did not add \(name) to \(bundle)")
        }
    }

    /// Takes `name` out (its file and the links to it), rebuilds the
    /// bundle, and checks that it no longer holds `authority`.
    package static func remove(_ authority: String, as name: String) throws {
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
        let result = try ChildCommand(
            program: "/usr/bin/timeout",
            ["--signal=KILL", "120", "/usr/bin/flock", "-w", "100", lock, update]
        ).runBlocking(timeout: .seconds(150))
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
