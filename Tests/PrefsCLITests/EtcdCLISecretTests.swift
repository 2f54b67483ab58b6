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
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .timeLimit(.minutes(5)))
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
        #expect(try await prefs(etcd, ["set", "log_level", "debug"]).output.status == 0)
        let set = try await prefs(etcd, ["set", "api_token", Self.secret])
        #expect(set.output.status == 0, "\(set.output.standardError)")
        let desired = directory.file("desired.json")
        try write(#"{"api_token":"tok-B","log_level":"warn"}"#, to: desired)
        let refused = directory.file("refused.json")
        try write(#"{"api_token":"\#(Self.secret)"}"#, to: refused)

        // Where a value would be shown, <redacted> is shown instead.
        var redacting: [Run] = []
        for arguments in [
            ["get", "api_token", "--long"], ["get", "api_token", "--long", "--json"],
            ["list"], ["list", "--long"], ["list", "--json"], ["list", "--json", "--long"],
            ["list", "--defaults"], ["export"], ["export", "--format", "properties"],
            ["export", "--format", "plist"], ["log"], ["log", "--json"], ["log", "api_token"],
            ["diff", desired.path], ["apply", desired.path, "--dry-run"],
        ] {
            redacting.append(try await prefs(etcd, arguments))
        }
        // A stored value the manifest refuses, a value it refuses, one not
        // of the type asked for, and a file holding a refused value.
        let checked = try await prefs(etcd, ["check"], manifest: strict)
        let refusedSet = try await prefs(etcd, ["set", "api_token", Self.secret], manifest: strict)
        let refusedType = try await prefs(etcd, ["set", "api_token", Self.secret, "--type", "int"])
        let refusedApply = try await prefs(etcd, ["apply", refused.path], manifest: strict)
        for run in [checked, refusedSet, refusedType, refusedApply] {
            #expect(run.output.status == 3, "\(run.arguments): \(run.printed)")
            redacting.append(run)
        }
        for run in redacting {
            #expect(!run.leaks, "\(run.arguments) printed the secret: \(run.printed)")
            // XML escapes the marker; the history records only that a secret changed.
            let marker =
                run.arguments.contains("plist")
                ? "&lt;redacted&gt;"
                : run.arguments == ["log", "--json"]
                    ? #""api_token":{"secret":true}"# : Self.redacted
            #expect(run.printed.contains(marker), "\(run.arguments) printed \(run.printed)")
        }
        #expect(
            redacting[2].output.standardOutput == "api_token = <redacted>\nlog_level = \"debug\"\n")
        #expect(
            redacting[13].output.standardOutput
                == "api_token: <redacted> → <redacted>\nlog_level: \"debug\" → \"warn\"\n")

        // Commands that show no value of the secret, and the temporary change of one.
        let temporary = try await prefs(etcd, ["set", "api_token", Self.secret, "--for", "1h"])
        #expect(temporary.output.status == 0, "\(temporary.printed)")
        var quiet: [Run] = [temporary]
        for arguments in [
            ["restore", "--to", "1", "--dry-run"], ["check"], ["get", "log_level", "--long"],
            ["list", "--long"], ["log", "-n", "1"], ["set", "log_level", "trace"],
        ] {
            quiet.append(try await prefs(etcd, arguments))
        }
        for run in quiet {
            #expect(!run.leaks, "\(run.arguments) printed the secret: \(run.printed)")
        }
        #expect(quiet[4].output.standardOutput.contains("api_token = <redacted>  # "))
        #expect(quiet[4].output.standardOutput.contains(", then <redacted>\n"))

        // watch: the current values, a change, and the history feed.
        let watched = try await watchLines(etcd, ["watch"], thenSet: Self.secret + "-new")
        #expect(!watched.contains(Self.secret), "\(watched)")
        #expect(watched.contains(#"{"key":"api_token","value":"<redacted>""#), "\(watched)")
        let history = try await watchLines(etcd, ["watch", "--since", "0"], thenSet: Self.secret)
        #expect(!history.contains(Self.secret), "\(history)")
        #expect(history.contains(#""api_token":{"secret":true}"#), "\(history)")

        // Asking for the key by name, and --reveal, show it.
        for arguments in [
            ["get", "api_token"], ["get", "api_token", "--json"], ["--reveal", "list"],
            ["--reveal", "export"], ["--reveal", "get", "api_token", "--long"],
        ] {
            let run = try await prefs(etcd, arguments)
            #expect(run.output.status == 0, "\(arguments): \(run.printed)")
            #expect(run.leaks, "\(arguments) printed \(run.printed)")
        }
        #expect(try await prefs(etcd, ["get", "api_token"]).output.line == Self.secret)
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
        let root = try PreferenceValue(jsonText: document.text)
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

    /// Runs `prefs watch` with `arguments` on the store, waits for its
    /// first line, sets the secret to `value` from another process, waits
    /// for that line, and returns every line printed.
    func watchLines(_ etcd: [String], _ arguments: [String], thenSet value: String) async throws
        -> String
    {
        let watch = try RunningProcess(
            "prefs", etcd + ["--manifest", manifest.path] + arguments)
        // Killed only while it may run: once reaped, its pid may be another's.
        var exited = false
        defer { if !exited { watch.kill(SIGKILL) } }
        var lines = [try #require(try await watch.nextLine(timeout: .seconds(60)))]
        #expect(try await prefs(etcd, ["set", "api_token", value]).output.status == 0)
        while !lines.last!.contains("api_token") || lines.count < 2 {
            lines.append(try #require(try await watch.nextLine(timeout: .seconds(60))))
        }
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
        exited = true
        while let line = try await watch.nextLine(timeout: .seconds(60)) { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
