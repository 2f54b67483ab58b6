import Foundation
import PreferencesTestSupport
import Testing

/// `prefs completions zsh` and `prefs completions fish`: each parses in
/// its shell and registers itself there; fish, which can complete a line
/// without a terminal, is driven too.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIZshFishCompletionTests {
    let workspace: CompletionWorkspace

    init() throws {
        workspace = try CompletionWorkspace()
    }

    @Test(.enabled(if: CompletionShells.zsh != nil, "zsh is not installed"))
    func theZshScriptParses() async throws {
        let zsh = try #require(CompletionShells.zsh)
        let script = try await workspace.script("zsh")
        let output = try await runProgram(
            zsh, ["-n", script.path], environment: workspace.environment)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError == "")
    }

    @Test(.enabled(if: CompletionShells.zsh != nil, "zsh is not installed"))
    func theZshScriptRegistersWithCompinit() async throws {
        let zsh = try #require(CompletionShells.zsh)
        let output = try await runProgram(
            zsh,
            [
                "-f", "-c",
                "autoload -U compinit && compinit -u -D && source <(prefs completions zsh) "
                    + "&& print -r -- $_comps[prefs]",
            ], environment: workspace.environment)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "_prefs\n")
    }

    @Test(.enabled(if: CompletionShells.fish != nil, "fish is not installed"))
    func theFishScriptParses() async throws {
        let fish = try #require(CompletionShells.fish)
        let script = try await workspace.script("fish")
        let output = try await runProgram(
            fish, ["--no-execute", script.path], environment: workspace.environment)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError == "")
    }

    @Test(.enabled(if: CompletionShells.fish != nil, "fish is not installed"))
    func fishCompletesCommandsSuitesFormatsAndKeys() async throws {
        try await workspace.makeStores()
        #expect(
            try await workspace.fishCompletions("prefs ")
                == [
                    "apply", "check", "clear", "completions", "delete", "diff", "edit", "export",
                    "get", "help", "import", "list", "log", "path", "replicas", "restore", "revert",
                    "set", "watch",
                ])
        #expect(try await workspace.fishCompletions("prefs --suite ") == ["app", "other"])
        #expect(
            try await workspace.fishCompletions("prefs export --format ") == [
                "json", "plist", "properties",
            ])
        #expect(
            try await workspace.fishCompletions("prefs --suite app set ")
                == ["build", "dark_mode", "language", "map_zoom"])
        #expect(try await workspace.fishCompletions("prefs --suite app set build ") == [])
        #expect(try await workspace.fishCompletions("prefs get --suite=other ") == ["zoom"])
        #expect(try await workspace.fishCompletions("prefs list --d") == ["--defaults"])
    }
}
