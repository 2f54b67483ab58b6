import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs set --for` on a store in etcd: a fresh reader, on its own
/// clock, reads the earlier value once the end has passed (A4 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md).
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 3))
struct EtcdCLITemporaryTests {
    /// Runs `prefs` with the clean environment (no PREFS_ETCD_*).
    func prefs(_ arguments: [String]) async throws -> ProcessOutput {
        try await runChild("prefs", arguments)
    }

    @Test func aFreshReaderSeesTheEarlierValueAfterTheEnd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let etcd = ["--etcd", cluster.endpointList, "--key", uniqueKey("cli-temporary")]
        #expect(try await prefs(etcd + ["set", "log_level", "info"]).status == 0)
        let set = try await prefs(etcd + ["set", "log_level", "debug", "--for", "1s"])
        #expect(set.status == 0, "\(set.standardError)")
        // The end, from the history: a get --long may come after it on a busy machine.
        let end = try CLITemporaryTests.end(of: try await prefs(etcd + ["log", "-n", "1"]).line)
        var values: [String] = []
        let reads = try await pollUntil(deadline: .seconds(30)) {
            values.append(try await prefs(etcd + ["get", "log_level"]).line)
            return values.last == "info"
        }
        for (read, value) in zip(reads, values).dropLast() {
            #expect(value == "debug")
            #expect(read.started <= end)
        }
        #expect(try #require(reads.last).finished >= end)
        // A reader after the end shows no temporary value.
        let after = try await prefs(etcd + ["get", "log_level", "--long"]).line
        #expect(!after.contains("temporary"), "\(after)")
        // get --long on etcd names the end and what the key returns to.
        #expect(try await prefs(etcd + ["set", "mode", "a"]).status == 0)
        #expect(try await prefs(etcd + ["set", "mode", "b", "--for", "1h"]).status == 0)
        let long = try await prefs(etcd + ["get", "mode", "--long"]).line
        #expect(long.hasPrefix("b  # ") && long.hasSuffix(#", then "a""#), "\(long)")
        #expect(try CLITemporaryTests.end(of: long).timeIntervalSinceNow > 3500)
    }
}
