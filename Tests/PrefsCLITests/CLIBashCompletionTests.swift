import Foundation
import Preferences
import PreferencesTestSupport
import Testing

/// `prefs completions bash`, loaded into a real bash as a user's
/// `~/.bashrc` would, and driven as bash drives a completion function: with
/// `COMP_WORDS` and `COMP_CWORD` set, reading back `COMPREPLY`.
@Suite(
    .enabled("bash 4 or later is not installed") { try await CompletionShells.bash() != nil },
    .scaledTimeLimit(minutes: 10))
struct CLIBashCompletionTests {
    let workspace: CompletionWorkspace

    init() throws {
        workspace = try CompletionWorkspace()
    }

    static let commands = [
        "get", "set", "delete", "edit", "list", "clear", "import", "export", "diff", "apply",
        "watch", "log", "revert", "restore", "check", "replicas", "path", "help", "completions",
    ]

    @Test func theScriptRegistersAFunctionForPrefs() async throws {
        let output = try await workspace.bash(
            "source <(prefs completions bash) && complete -p prefs")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError == "")
        #expect(output.standardOutput == "complete -F _prefs prefs\n")
    }

    @Test func commandsAreOfferedAfterPrefs() async throws {
        #expect(try await workspace.complete(["prefs", ""]) == Self.commands.sorted())
        #expect(try await workspace.complete(["prefs", "ex"]) == ["export"])
        #expect(
            try await workspace.complete(["prefs", "--suite", "x", "c"]) == [
                "check", "clear", "completions",
            ])
    }

    @Test func aCommandsOptionsAndTheGlobalOnesAreOffered() async throws {
        let offered = try await workspace.complete(["prefs", "list", "--"])
        #expect(
            offered
                == [
                    "--defaults", "--etcd", "--etcd-password-file", "--file", "--help", "--json",
                    "--key", "--long", "--manifest", "--reveal", "--suite", "--system",
                ])
        // Before a command, --version too; the scripts' own --list never.
        let first = try await workspace.complete(["prefs", "--"])
        #expect(first.contains("--version"))
        #expect(!first.contains("--json"))
        #expect(!(try await workspace.complete(["prefs", "completions", "--"])).contains("--list"))
    }

    @Test func suiteNamesComeFromTheStoreDirectory() async throws {
        try await workspace.makeStores()
        #expect(try await workspace.complete(["prefs", "--suite", ""]) == ["app", "other"])
        #expect(try await workspace.complete(["prefs", "get", "--suite", "o"]) == ["other"])
        // Bash makes '=' a word of its own: --suite=<Tab> is three words.
        #expect(try await workspace.complete(["prefs", "--suite", "=", ""]) == ["app", "other"])
        #expect(try await workspace.complete(["prefs", "--suite", "="]) == ["app", "other"])
    }

    @Test func setOffersTheKeysOfThePublishedManifestAndTheStoredOnes() async throws {
        try await workspace.makeStores()
        #expect(
            try await workspace.complete(["prefs", "--suite", "app", "set", ""])
                == ["build", "dark_mode", "language", "map_zoom"])
        // The value after the key is free text.
        #expect(
            try await workspace.complete(["prefs", "--suite", "app", "set", "build", ""]) == [])
        // Global options after the command count too, and the default suite has no keys.
        #expect(
            try await workspace.complete(["prefs", "get", "--suite", "app", "l"]) == ["language"])
        #expect(try await workspace.complete(["prefs", "set", ""]) == [])
    }

    @Test func keysFollowFileAndManifestOnTheLine() async throws {
        try await workspace.makeStores()
        let manifest = workspace.directory.file("keys.json")
        try write(#"{ "format" : 1, "keys" : { "retries" : { "type" : "int" } } }"#, to: manifest)
        let file = workspace.store("other").path
        #expect(
            try await workspace.complete([
                "prefs", "--file", file, "--manifest", manifest.path, "watch", "x", "",
            ]) == ["retries", "zoom"])
        #expect(
            try await workspace.complete(["prefs", "delete", "--file=\(file)", ""]) == ["zoom"])
    }

    @Test func formatsAreEachCommandsOwn() async throws {
        #expect(
            try await workspace.complete(["prefs", "export", "--format", ""])
                == ["json", "plist", "properties"])
        #expect(
            try await workspace.complete(["prefs", "import", "x", "--format", ""])
                == ["envdir", "json", "plist", "properties", "shared-prefs"])
        #expect(
            try await workspace.complete(["prefs", "set", "k", "v", "--type", "d"])
                == ["data", "date", "double"])
    }

    @Test func pathsCompleteAsFiles() async throws {
        let legacy = workspace.directory.file("legacy.properties")
        try write("a=1\n", to: legacy)
        let prefix = workspace.directory.file("leg").path
        #expect(try await workspace.complete(["prefs", "import", prefix]) == [legacy.path])
        #expect(try await workspace.complete(["prefs", "--manifest", prefix]) == [legacy.path])
    }

    @Test func helpOffersCommandsAndCompletionsOffersShells() async throws {
        #expect(
            try await workspace.complete(["prefs", "help", "c"]) == [
                "check", "clear", "completions",
            ])
        #expect(
            try await workspace.complete(["prefs", "completions", ""]) == ["bash", "fish", "zsh"])
    }
}

extension CompletionWorkspace {
    /// Runs `script` in bash with the clean environment.
    func bash(_ script: String) async throws -> ProcessOutput {
        let bash = try #require(try await CompletionShells.bash())
        return try await runProgram(bash, ["-c", script], environment: environment)
    }

    /// What the completion function bash registered for `prefs` offers for
    /// `words` (the last one is the word at the cursor), sorted.
    func complete(_ words: [String], sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> [String]
    {
        let quoted = words.map(CompletionShells.quoted)
        let script = """
            source <(prefs completions bash) || exit 1
            spec=$(complete -p prefs) || exit 1
            handler=${spec#*-F }
            handler=${handler%% *}
            COMP_WORDS=(\(quoted.joined(separator: " ")))
            COMP_CWORD=\(words.count - 1)
            COMP_LINE=\(CompletionShells.quoted(words.joined(separator: " ")))
            COMP_POINT=${#COMP_LINE}
            "$handler" prefs \(quoted[words.count - 1]) \(quoted[words.count - 2])
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let output = try await bash(script)
        #expect(output.status == 0, "\(output.standardError)", sourceLocation: sourceLocation)
        #expect(output.standardError == "", sourceLocation: sourceLocation)
        return output.standardOutput.split(separator: "\n").map(String.init).sorted()
    }
}
