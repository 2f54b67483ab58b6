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
@Suite(.scaledTimeLimit(minutes: 10)) struct CLISecretTests {
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
        try await SecretRedactionScenario(
            secret: Self.secret, store: ["--file", workspace.store.path], manifest: manifest,
            strict: strict, file: workspace.file
        ).run { () throws in
            // prefs created the store: readable by its owner only.
            #expect(try permissions(workspace.store) & 0o777 == 0o600)
        }
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
}
