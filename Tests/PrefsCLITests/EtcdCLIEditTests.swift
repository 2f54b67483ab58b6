import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs edit` on a store in etcd: the same copy, merge and output as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .timeLimit(.minutes(3)))
struct EtcdCLIEditTests {
    @Test func editWorksOnAStoreInEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let edit = try EditWorkspace()
        let etcd = ["--etcd", cluster.endpointList, "--key", uniqueKey("cli-edit")]
        var environment = cleanEnvironment()
        environment["PREFS_ETCD_ENDPOINTS"] = nil
        for arguments in [["set", "a", "1"], ["set", "b", "x"]] {
            let output = try await runChild("prefs", etcd + arguments, environment: environment)
            try #require(output.status == 0, "\(output.standardError)")
        }
        let child = try FinishingChild(
            "prefs", etcd + ["edit"],
            environment: edit.editEnvironment(
                editor: try edit.waitingEditor(#"{"a": 2, "b": "x"}"#), [:]),
            input: nil, user: nil)
        try await edit.waitForFile("started")
        #expect(
            contents(edit.file("shown.json")) == "{\n  \"a\" : 1,\n  \"b\" : \"x\"\n}\n")
        // Named after the key.
        #expect(edit.recordedCopyPath()?.hasSuffix(".json") == true)
        // Not locked meanwhile; this change stays.
        let set = try await runChild("prefs", etcd + ["set", "b", "y"], environment: environment)
        #expect(set.status == 0, "\(set.standardError)")
        try write("", to: edit.file("go"))
        let output = try await edit.finish(child)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "a: 1 → 2\n")
        let listed = try await runChild("prefs", etcd + ["list"], environment: environment)
        #expect(listed.standardOutput == "a = 2\nb = \"y\"\n")
        let log = try await runChild("prefs", etcd + ["log", "-n", "1"], environment: environment)
        #expect(log.line.hasSuffix(" via prefs (edit): a 1 → 2"), "\(log.line)")
    }
}
