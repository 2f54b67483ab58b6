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

/// Secrets in `prefs` on a store in etcd (A3 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md): as on
/// a file, a key a manifest declares `"secret": true` is shown as
/// `<redacted>` by every command but `get KEY`, and in every message,
/// unless `--reveal`; and the history etcd keeps beside the store's key
/// never holds its value.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 5))
struct EtcdCLISecretTests {
    static let secret = "s3cr3t-Et9"
    static let redacted = "<redacted>"

    let directory: TemporaryDirectory
    let manifest: URL
    let strict: URL

    init() throws {
        directory = try TemporaryDirectory()
        manifest = directory.file("keys.json")
        strict = directory.file("strict.json")
        try write(CLISecretTests.manifestText, to: manifest)
        try write(CLISecretTests.strictManifestText, to: strict)
    }

    /// One command's run: what it was and everything it printed.
    struct Run {
        let arguments: [String]
        let output: ProcessOutput
        var printed: String { output.standardOutput + output.standardError }
        var leaks: Bool { printed.contains(EtcdCLISecretTests.secret) }
    }

    /// Runs `prefs --etcd … --key KEY --manifest M arguments…` with the
    /// clean environment (no PREFS_ETCD_*), off the cooperative pool.
    func prefs(_ etcd: [String], _ arguments: [String], manifest: URL? = nil) async throws -> Run {
        let given = etcd + ["--manifest", (manifest ?? self.manifest).path] + arguments
        return Run(arguments: arguments, output: try await runChild("prefs", given))
    }

    /// `--etcd ENDPOINTS --key KEY` for a fresh key of the shared cluster.
    func etcdStore(_ name: String) async throws -> (EtcdCluster, String, [String]) {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey(name)
        return (cluster, key, ["--etcd", cluster.endpointList, "--key", key])
    }

    @Test func noCommandButGetKeyOrRevealPrintsTheSecretOfAStoreInEtcd() async throws {
        let (_, _, etcd) = try await etcdStore("cli-secret")
        try await SecretRedactionScenario(
            secret: Self.secret, store: etcd, manifest: manifest, strict: strict,
            file: directory.file
        ).run()
    }

    @Test func theHistoryKeysInEtcdNeverHoldASecretsValue() async throws {
        let (cluster, key, etcd) = try await etcdStore("cli-secret-history")
        // Each value of the secret distinct, so any one of them found is a leak.
        let values = (1...4).map { "\(Self.secret)-\($0)" }
        for value in values {
            let set = try await prefs(etcd, ["set", "api_token", value])
            try #require(set.output.status == 0, "\(set.printed)")
        }
        let temporary = try await prefs(etcd, ["set", "api_token", Self.secret, "--for", "1h"])
        try #require(temporary.output.status == 0, "\(temporary.printed)")
        // Enough other changes that the document's older entries, those of
        // the secret among them, move to keys of their own beside it.
        for number in 1...20 {
            let set = try await prefs(etcd, ["set", "n", "\(number)"])
            try #require(set.output.status == 0, "\(set.printed)")
        }

        let archived = try await cluster.keyValues(key + ".history/", prefix: true)
        #expect(archived.count >= 5, "\(archived.count) entries under \(key).history/")
        // The secret's five changes are there, each saying only that it changed.
        let secretEntries = archived.filter { $0.text.contains(#""api_token""#) }
        #expect(secretEntries.count == 5, "\(archived.map(\.text))")
        for entry in secretEntries {
            #expect(entry.text.contains(#""api_token":{"secret":true}"#), "\(entry.text)")
        }
        for entry in archived {
            #expect(!entry.text.contains(Self.secret), "\(entry.key) holds \(entry.text)")
        }
        // The document holds the value itself, and the history it still
        // carries does not.
        let document = try await cluster.document(key)
        #expect(document.text.contains(Self.secret))
        let root = try TestJSON.parse(document.text)
        guard case .object(let members) = root else {
            Issue.record("the document is not an object: \(document.text)")
            return
        }
        let history = try #require(members["history"], "\(document.text)")
        #expect(!history.jsonText.contains(Self.secret), "\(history.jsonText)")
        // And every entry, as the library reads it, says only that it changed.
        let store = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false)
        let entries = try await store.history().entries
        #expect(entries.count == 25)
        #expect(!entries.map(\.jsonText).joined().contains(Self.secret))
    }
}
