import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs diff` and `prefs apply` against a store in etcd: the same lines,
/// statuses and single change as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 3))
struct EtcdCLIApplyTests {
    /// Runs `prefs` with the clean environment (no PREFS_ETCD_*).
    func prefs(_ arguments: [String]) async throws -> ProcessOutput {
        try await runChild("prefs", arguments)
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

    /// A file of 1,000 keys, key.0000 … key.0999, each an int equal to its
    /// number modulo 100, with `changes` applied.
    func thousandKeys(in directory: TemporaryDirectory, _ changes: [String: String] = [:])
        throws -> URL
    {
        var members: [String] = []
        for number in 0..<1000 {
            let key = "key." + String(repeating: "0", count: 4 - String(number).count) + "\(number)"
            members.append("\"\(key)\": \(changes[key] ?? String(number % 100))")
        }
        let url = directory.file("thousand.json")
        try write("{\n" + members.joined(separator: ",\n") + "\n}\n", to: url)
        return url
    }

    @Test func aThousandKeysWithOneInvalidValueWriteNothingToEtcdAndNameIt() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("cli-apply-refused")
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        let directory = try TemporaryDirectory()
        let manifest = directory.file("keys.json")
        try write(CLIApplyDiffTests.manifestText, to: manifest)
        for arguments in [["set", "key.0001", "1"], ["set", "theme", "dark"]] {
            let output = try await prefs(etcd + arguments)
            try #require(output.status == 0, "\(arguments): \(output.standardError)")
        }
        // Everything etcd holds for the store, the document and the keys
        // beside it, read with etcdctl: bytes and revisions.
        let before = try await cluster.keyValues(key, prefix: true)
        #expect(before.map(\.key).contains(key), "\(before.map(\.key))")

        let file = try thousandKeys(in: directory, ["key.0500": "1000", "key.0900": #""on""#])
        for options in [[], ["--prune"], ["--dry-run"]] {
            let output = try await prefs(
                etcd + ["--manifest", manifest.path, "apply", file.path] + options)
            #expect(output.status == 3, "\(options): \(output.standardError)")
            #expect(output.standardOutput == "")
            #expect(
                output.standardError
                    == "prefs: error: nothing applied from \(file.path): a value does not fit the key manifest: key 'key.0500' must be at most 100, not 1000\n"
            )
            #expect(try await cluster.keyValues(key, prefix: true) == before, "\(options)")
        }
        let store = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false)
        #expect(store.snapshot.sequence == 2)
        #expect(store.snapshot.values == ["key.0001": 1, "theme": "dark"])

        // With every value valid, all 1,000 go in as one change.
        let valid = try thousandKeys(in: directory, ["key.0900": #""on""#])
        let applied = try await prefs(etcd + ["--manifest", manifest.path, "apply", valid.path])
        #expect(applied.status == 0, "\(applied.standardError)")
        #expect(applied.standardOutput == "applied 999 changes as #3\n")
        let document = try #require(before.first { $0.key == key })
        #expect(try await cluster.document(key).modRevision > document.modRevision)
        let reader = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false)
        #expect(reader.snapshot.values.count == 1001)
        #expect(reader.snapshot.sequence == 3)
    }
}
