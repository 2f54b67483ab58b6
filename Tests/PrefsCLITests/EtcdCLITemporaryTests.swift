import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs set --for` on a store in etcd: a fresh reader, on its own
/// clock, reads the earlier value once the end has passed (A4 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md).
@Suite(.timeLimit(.minutes(3))) struct EtcdCLITemporaryTests {
    func prefs(_ arguments: [String]) async throws -> ProcessOutput {
        var environment = cleanEnvironment()
        environment["PREFS_ETCD_ENDPOINTS"] = nil
        let final = environment
        return try await offPool { try run("prefs", arguments, environment: final) }
    }

    @Test func aFreshReaderSeesTheEarlierValueAfterTheEnd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let etcd = ["--etcd", cluster.endpointList, "--key", uniqueKey("cli-temporary")]
        #expect(try await prefs(etcd + ["set", "log_level", "info"]).status == 0)
        let set = try await prefs(etcd + ["set", "log_level", "debug", "--for", "1s"])
        #expect(set.status == 0, "\(set.standardError)")
        let long = try await prefs(etcd + ["get", "log_level", "--long"]).line
        let end = try CLITemporaryTests.end(of: long)
        #expect(long.hasSuffix(", then \"info\""), "\(long)")
        let reads = try await pollUntil(deadline: .seconds(30)) {
            try await prefs(etcd + ["get", "log_level"]).line == "info"
        }
        for read in reads.dropLast() { #expect(read.started <= end) }
        #expect(try #require(reads.last).finished >= end)
        // Nothing was written at the end: the document still names it, and
        // the next write drops it.
        let after = try await prefs(etcd + ["get", "log_level", "--long"]).line
        #expect(!after.contains("temporary"), "\(after)")
    }
}
