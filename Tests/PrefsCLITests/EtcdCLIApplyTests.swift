import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs diff` and `prefs apply` against a store in etcd: the same lines,
/// statuses and single change as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .timeLimit(.minutes(3)))
struct EtcdCLIApplyTests {
    /// Runs `prefs` off the cooperative pool, with PREFS_ETCD_* cleared.
    func prefs(_ arguments: [String]) async throws -> ProcessOutput {
        var environment = cleanEnvironment()
        for name in ["PREFS_ETCD_ENDPOINTS", "PREFS_ETCD_USER", "PREFS_ETCD_PASSWORD"] {
            environment[name] = nil
        }
        let final = environment
        return try await offPool { try run("prefs", arguments, environment: final) }
    }

    @Test func diffAndApplyWorkOnAKeyInEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let etcd = ["--etcd", cluster.endpointList, "--key", uniqueKey("cli-apply")]
        let directory = try TemporaryDirectory()
        let file = directory.file("desired.json")
        try write(#"{"a": 2, "c": [1]}"#, to: file)

        #expect(try await prefs(etcd + ["set", "a", "1"]).status == 0)
        #expect(try await prefs(etcd + ["set", "b", "x"]).status == 0)

        let differs = try await prefs(etcd + ["diff", file.path])
        #expect(differs.status == 1, "\(differs.standardError)")
        #expect(differs.standardOutput == "a: 1 → 2\nc: (unset) → [1]\n")
        let dryRun = try await prefs(etcd + ["apply", file.path, "--dry-run", "--prune"])
        #expect(dryRun.status == 0)
        #expect(dryRun.standardOutput == "a: 1 → 2\nb: \"x\" → (unset)\nc: (unset) → [1]\n")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 1\nb = \"x\"\n")

        let applied = try await prefs(etcd + ["apply", file.path, "--prune"])
        #expect(applied.status == 0, "\(applied.standardError)")
        #expect(applied.standardOutput == "applied 3 changes as #3\n")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 2\nc = [1]\n")
        let logged = try await prefs(etcd + ["log", "-n", "1"])
        #expect(
            logged.line.hasSuffix(
                #" via prefs (apply): a 1 → 2, b "x" → (unset), c (unset) → [1]"#),
            "\(logged.line)")

        let again = try await prefs(etcd + ["apply", file.path, "--prune"])
        #expect(again.standardOutput == "nothing to apply: the store holds these values\n")
        #expect(try await prefs(etcd + ["diff", file.path, "--prune"]).status == 0)
        #expect(try await prefs(etcd + ["log", "-n", "1"]).line == logged.line)
    }
}
