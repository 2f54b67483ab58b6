import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences
@testable import PreferencesEtcd
@testable import PreferencesEtcdTLS

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `https://` endpoints are verified against the system's trust store (E5):
/// with a certificate authority the test creates, rejected until the system
/// trusts it, then used — and the authority removed again.
@Suite(
    .serialized, .takesTurns(.clusters),
    .enabled(if: etcdAvailable, etcdUnavailableReason),
    .enabled(if: canTrustTestAuthority, testAuthorityUnavailableReason),
    .scaledTimeLimit(minutes: 5))
struct EtcdTLSTests {
    @Test func anHTTPSEndpointIsRefusedUntilTheSystemTrustsItsAuthority() async throws {
        let directory = try TemporaryDirectory()
        let tls = try await EtcdCluster.TLS.make(in: directory)
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
