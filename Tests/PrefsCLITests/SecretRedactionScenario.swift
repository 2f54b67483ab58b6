import Foundation
import PreferencesTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What every `prefs` command shows of a secret (A3 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md), on one
/// store, whatever its backend: `<redacted>` wherever a value would be
/// shown, in every message included, the value itself only for `get KEY`
/// and `--reveal`. The file and etcd tests run the same scenario.
struct SecretRedactionScenario {
    static let redacted = "<redacted>"

    /// The secret's value, which no output may hold but where asked for.
    let secret: String
    /// The arguments that name the store (`--file PATH`, or `--etcd … --key KEY`).
    let store: [String]
    /// The manifest declaring `api_token` secret, and a stricter one that
    /// refuses the secret's value.
    let manifest: URL
    let strict: URL
    /// Where the scenario's own files go.
    let file: (String) -> URL

    /// One command's run: what it was and everything it printed.
    struct Run {
        let arguments: [String]
        let output: ProcessOutput
        let secret: String
        var printed: String { output.standardOutput + output.standardError }
        var leaks: Bool { printed.contains(secret) }
    }

    func prefs(_ arguments: String..., manifest: URL? = nil) async throws -> Run {
        try await prefs(arguments, manifest: manifest)
    }

    /// Runs `prefs STORE --manifest M arguments…` with the clean environment.
    func prefs(_ arguments: [String], manifest: URL? = nil) async throws -> Run {
        let given = store + ["--manifest", (manifest ?? self.manifest).path] + arguments
        return Run(arguments: arguments, output: try await runChild("prefs", given), secret: secret)
    }

    /// Runs the whole scenario; `afterFirstSet` is a check of the backend's
    /// own, made once the secret is first stored.
    func run(afterFirstSet: () throws -> Void = {}) async throws {
        #expect(try await prefs(["set", "log_level", "debug"]).output.status == 0)
        let set = try await prefs("set", "api_token", secret)
        #expect(set.output.status == 0, "\(set.output.standardError)")
        try afterFirstSet()
        let desired = file("desired.json")
        try write(#"{"api_token":"tok-B","log_level":"warn"}"#, to: desired)
        let refused = file("refused.json")
        try write(#"{"api_token":"\#(secret)"}"#, to: refused)

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
        let checked = try await prefs(["check"], manifest: strict)
        let refusedSet = try await prefs("set", "api_token", secret, manifest: strict)
        let refusedType = try await prefs(["set", "api_token", secret, "--type", "int"])
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
                    ? #""api_token":{"secret":true}"# : SecretRedactionScenario.redacted
            #expect(run.printed.contains(marker), "\(run.arguments) printed \(run.printed)")
        }
        #expect(
            redacting[2].output.standardOutput == "api_token = <redacted>\nlog_level = \"debug\"\n")
        #expect(
            redacting[13].output.standardOutput
                == "api_token: <redacted> → <redacted>\nlog_level: \"debug\" → \"warn\"\n")

        // Commands that show no value of the secret, and the temporary change of one.
        let temporary = try await prefs(["set", "api_token", secret, "--for", "1h"])
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
        let watched = try await watchLines(["watch"], thenSet: secret + "-new")
        #expect(!watched.contains(secret), "\(watched)")
        #expect(watched.contains(#"{"key":"api_token","value":"<redacted>""#), "\(watched)")
        let history = try await watchLines(["watch", "--since", "0"], thenSet: secret)
        #expect(!history.contains(secret), "\(history)")
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
        #expect(try await prefs(["get", "api_token"]).output.line == secret)
    }

    /// Runs `prefs watch` with `arguments`, waits for its first line, sets
    /// the secret to `value` from another process, waits for that line,
    /// and returns every line printed.
    func watchLines(_ arguments: [String], thenSet value: String) async throws -> String {
        let watch = try RunningProcess(
            "prefs", store + ["--manifest", manifest.path] + arguments)
        // Killed only while it may run: once reaped, its pid may be another's.
        var exited = false
        defer { if !exited { watch.kill(SIGKILL) } }
        var lines = [try #require(try await watch.nextLine(timeout: .seconds(60)))]
        #expect(try await prefs(["set", "api_token", value]).output.status == 0)
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
