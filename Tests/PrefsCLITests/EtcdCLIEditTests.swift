import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs edit` on a store in etcd: the same copy, merge and output as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 3))
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
        let child = try ChildCommand(
            "prefs", etcd + ["edit"],
            environment: edit.editEnvironment(
                editor: try edit.waitingEditor(#"{"a": 2, "b": "x"}"#), [:])
        ).start()
        try await edit.waitForFile("started")
        #expect(
            contents(edit.file("shown.json")) == "{\n  \"a\" : 1,\n  \"b\" : \"x\"\n}\n")
        // Named after the key.
        #expect(edit.recordedCopyPath()?.hasSuffix(".json") == true)
        // Not locked meanwhile; this change stays.
        let set = try await runChild("prefs", etcd + ["set", "b", "y"], environment: environment)
        #expect(set.status == 0, "\(set.standardError)")
        try write("", to: edit.file("go"))
        let output = try await child.result()
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "a: 1 → 2\n")
        let listed = try await runChild("prefs", etcd + ["list"], environment: environment)
        #expect(listed.standardOutput == "a = 2\nb = \"y\"\n")
        let log = try await runChild("prefs", etcd + ["log", "-n", "1"], environment: environment)
        #expect(log.line.hasSuffix(" via prefs (edit): a 1 → 2"), "\(log.line)")
    }

    @Test(arguments: [
        // Another process changed a key the editor changed too.
        (["set", "a", "7"], #"{"a": 2, "b": "x"}"#, "'a'"),
        // It removed a key the editor changed.
        (["delete", "b"], #"{"a": 1, "b": "z"}"#, "'b'"),
        // It cleared the store while the editor changed both keys.
        (["clear"], #"{"a": 5, "b": "z", "d": true}"#, "'a', 'b'"),
    ])
    func aKeyChangedOnBothSidesIsAConflictWritingNothingToEtcd(
        store command: [String], edited: String, keys: String
    ) async throws {
        let cluster = try await SharedEtcd.cluster()
        let edit = try EditWorkspace()
        let key = uniqueKey("cli-edit-conflict")
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        for arguments in [["set", "a", "1"], ["set", "b", "x"]] {
            let output = try await runChild("prefs", etcd + arguments)
            try #require(output.status == 0, "\(output.standardError)")
        }
        let child = try ChildCommand(
            "prefs", etcd + ["edit"],
            environment: edit.editEnvironment(editor: try edit.waitingEditor(edited), [:])
        ).start()
        try await edit.waitForFile("started")
        // While the editor is open, another prefs changes the store.
        let changed = try await runChild("prefs", etcd + command)
        #expect(changed.status == 0, "\(command): \(changed.standardError)")
        // Everything etcd holds for the store, the document and the keys
        // beside it, read with etcdctl: bytes and revisions.
        let before = try await cluster.keyValues(key, prefix: true)
        #expect(before.map(\.key).contains(key), "\(before.map(\.key))")

        try write("", to: edit.file("go"))
        let output = try await child.result()
        #expect(output.status == 3, "\(output.standardError)")
        #expect(output.standardOutput == "")
        let kept = try #require(output.keptCopy, "\(output.standardError)")
        #expect(
            output.standardError
                == "prefs: error: these keys changed both in your edit and in the store meanwhile: "
                + "\(keys); nothing was written; your edit is kept in \(kept)\n")
        #expect(contents(URL(fileURLWithPath: kept)) == edited)
        #expect(try await cluster.keyValues(key, prefix: true) == before)
        let store = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false)
        #expect(store.snapshot.sequence == 3)
    }
}
