import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Secrets in `prefs` (A3 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md): a key a
/// manifest in force declares `"secret": true` is shown as `<redacted>` by
/// every command but `get KEY`, and in every message, unless `--reveal`.
@Suite(.timeLimit(.minutes(10))) struct CLISecretTests {
    static let secret = "s3cr3t-Zq9"
    static let redacted = "<redacted>"

    static let manifestText = """
        {
          "format" : 1,
          "keys" : {
            "api_token" : { "type" : "string", "secret" : true },
            "log_level" : { "type" : "string", "default" : "info" }
          }
        }
        """
    /// The same secret, now allowed only one value its stored one does not match.
    static let strictManifestText = """
        {
          "format" : 1,
          "keys" : {
            "api_token" : { "type" : "string", "secret" : true, "enum" : ["tok-A"] }
          }
        }
        """

    let workspace: CLIWorkspace
    let manifest: URL
    let strict: URL

    init() throws {
        workspace = try CLIWorkspace()
        manifest = workspace.file("keys.json")
        strict = workspace.file("strict.json")
        try write(Self.manifestText, to: manifest)
        try write(Self.strictManifestText, to: strict)
    }

    /// One command's run: what it was and everything it printed.
    struct Run {
        let arguments: [String]
        let output: ProcessOutput
        var printed: String { output.standardOutput + output.standardError }
        var leaks: Bool { printed.contains(CLISecretTests.secret) }
    }

    func prefs(_ arguments: String..., manifest: URL? = nil) async throws -> Run {
        try await prefs(arguments, manifest: manifest)
    }

    func prefs(_ arguments: [String], manifest: URL? = nil) async throws -> Run {
        let given = ["--manifest", (manifest ?? self.manifest).path] + arguments
        return Run(arguments: arguments, output: try await workspace.prefs(given))
    }

    @Test func noCommandButGetKeyOrRevealPrintsTheSecret() async throws {
        #expect(try await prefs("set", "log_level", "debug").output.status == 0)
        let set = try await prefs("set", "api_token", Self.secret)
        #expect(set.output.status == 0, "\(set.output.standardError)")
        // prefs created the store: readable by its owner only.
        #expect(try permissions(workspace.store) & 0o777 == 0o600)
        let desired = workspace.file("desired.json")
        try write(#"{"api_token":"tok-B","log_level":"warn"}"#, to: desired)
        let refused = workspace.file("refused.json")
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
            redacting.append(try await prefs(arguments))
        }
        // A value the manifest refuses, and one that is not of the type asked for.
        let checked = try await prefs("check", manifest: strict)
        let refusedSet = try await prefs("set", "api_token", Self.secret, manifest: strict)
        let refusedType = try await prefs("set", "api_token", Self.secret, "--type", "int")
        let refusedApply = try await prefs("apply", refused.path, manifest: strict)
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
        let temporary = try await prefs("set", "api_token", Self.secret, "--for", "1h")
        #expect(temporary.output.status == 0, "\(temporary.printed)")
        var quiet: [Run] = [temporary]
        for arguments in [
            ["restore", "--to", "1", "--dry-run"], ["check"], ["get", "log_level", "--long"],
            ["list", "--long"], ["log", "-n", "1"], ["set", "log_level", "trace"],
        ] {
            quiet.append(try await prefs(arguments))
        }
        for run in quiet {
            #expect(!run.leaks, "\(run.arguments) printed the secret: \(run.printed)")
        }
        #expect(quiet[4].output.standardOutput.contains("api_token = <redacted>  # "))
        #expect(quiet[4].output.standardOutput.contains(", then <redacted>\n"))

        // watch: the current values, a change, and the history feed.
        let watched = try await watchLines(["watch"], thenSet: Self.secret + "-new")
        #expect(!watched.contains(Self.secret), "\(watched)")
        #expect(watched.contains(#"{"key":"api_token","value":"<redacted>""#), "\(watched)")
        let history = try await watchLines(["watch", "--since", "0"], thenSet: Self.secret)
        #expect(!history.contains(Self.secret), "\(history)")
        #expect(history.contains(#""api_token":{"secret":true}"#), "\(history)")

        // Asking for the key by name, and --reveal, show it.
        for arguments in [
            ["get", "api_token"], ["get", "api_token", "--json"], ["--reveal", "list"],
            ["--reveal", "export"], ["--reveal", "get", "api_token", "--long"],
        ] {
            let run = try await prefs(arguments)
            #expect(run.output.status == 0, "\(arguments): \(run.printed)")
            #expect(run.leaks, "\(arguments) printed \(run.printed)")
        }
        #expect(try await prefs("get", "api_token").output.line == Self.secret)
    }

    @Test func theManifestFromTheEnvironmentOrBesideTheStoreDeclaresSecretsToo() async throws {
        #expect(try await prefs("set", "api_token", Self.secret).output.status == 0)
        // The store's document now lists the secret: no manifest is needed.
        let bare = try await workspace.prefs("list")
        #expect(bare.standardOutput == "api_token = <redacted>\n")
        let other = try CLIWorkspace()
        try write(Self.manifestText, to: other.file("env.json"))
        var environment = cleanEnvironment()
        environment["PREFS_MANIFEST"] = other.file("env.json").path
        let fromEnvironment = try await other.prefs(
            environment: environment,
            ["--file", other.store.path, "set", "api_token", Self.secret])
        #expect(fromEnvironment.status == 0)
        #expect(try permissions(other.store) & 0o777 == 0o600)
        let listed = try await other.prefs(
            environment: environment, ["--file", other.store.path, "export"])
        #expect(!listed.standardOutput.contains(Self.secret), "\(listed.standardOutput)")
        #expect(listed.standardOutput.contains(#""api_token" : "<redacted>""#))
        let revealed = try await other.prefs(
            environment: environment, ["--file", other.store.path, "--reveal", "export"])
        #expect(revealed.standardOutput.contains(Self.secret))

        // The manifest a service published beside its store.
        let published = try CLIWorkspace()
        try write(Self.manifestText, to: published.file("prefs.keys.json"))
        #expect(try await published.prefs("set", "api_token", Self.secret).status == 0)
        #expect(try permissions(published.store) & 0o777 == 0o600)
        let diffed = workspace.file("other.json")
        try write(#"{"api_token":"\#(Self.secret)-2"}"#, to: diffed)
        let diff = try await published.prefs("diff", diffed.path)
        #expect(diff.status == 1)
        #expect(diff.standardOutput == "api_token: <redacted> → <redacted>\n")
    }

    @Test func editPrintsTheChangesOfASecretRedacted() async throws {
        let edit = try EditWorkspace()
        let manifest = ["--manifest", self.manifest.path]
        let set = try await edit.workspace.prefs(manifest + ["set", "api_token", Self.secret])
        #expect(set.status == 0)
        let editor = try edit.writingEditor(#"{"api_token":"\#(Self.secret)-2","n":1}"#)
        let edited = try await edit.edit(editor: editor, arguments: manifest)
        #expect(edited.status == 0, "\(edited.standardError)")
        #expect(edited.standardOutput == "api_token: <redacted> → <redacted>\nn: (unset) → 1\n")
        #expect(!(edited.standardOutput + edited.standardError).contains(Self.secret))
        // A value the manifest refuses is named without the value.
        let refusing = try edit.writingEditor(
            #"{"api_token":"\#(Self.secret)","n":1}"#, name: "refusing")
        let refused = try await edit.edit(editor: refusing, arguments: ["--manifest", strict.path])
        #expect(refused.status == 3)
        #expect(refused.standardError.contains("<redacted>"), "\(refused.standardError)")
        #expect(!(refused.standardOutput + refused.standardError).contains(Self.secret))
    }

    /// Runs `prefs watch` with `arguments`, waits for its first line, sets
    /// the secret to `value` from another process, waits for that line,
    /// and returns every line printed.
    func watchLines(_ arguments: [String], thenSet value: String) async throws -> String {
        let watch = try RunningProcess(
            "prefs", ["--file", workspace.store.path, "--manifest", manifest.path] + arguments)
        // Killed only while it may run: once reaped, its pid may be another's.
        var exited = false
        defer { if !exited { watch.kill(SIGKILL) } }
        var lines = [try #require(try await watch.nextLine(timeout: .seconds(60)))]
        #expect(try await prefs("set", "api_token", value).output.status == 0)
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
