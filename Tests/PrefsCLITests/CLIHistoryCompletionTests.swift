import Foundation
import PreferencesTestSupport
import Testing

/// The completion scripts for `log`, `revert`, `restore` and `watch
/// --since`: their options, `-n` as an option that takes a value, and keys.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIHistoryCompletionTests {
    let workspace: CompletionWorkspace

    init() throws {
        workspace = try CompletionWorkspace()
    }

    @Test(.enabled("bash 4 or later is not installed") { try await CompletionShells.bash() != nil })
    func bashOffersTheHistoryCommandsOptionsAndKeys() async throws {
        try await workspace.makeStores()
        let log = try await workspace.complete(["prefs", "log", "-"])
        #expect(Set(["--max-count", "-n", "--since", "--json"]).isSubset(of: log), "\(log)")
        #expect(!log.contains("--force"))
        #expect(
            try await workspace.complete(["prefs", "--suite", "app", "log", ""])
                == ["build", "dark_mode", "language", "map_zoom"])
        // The word after -n is its value; the next one is a key again.
        #expect(try await workspace.complete(["prefs", "--suite", "app", "log", "-n", ""]) == [])
        #expect(
            try await workspace.complete(["prefs", "--suite", "app", "log", "-n", "5", "l"])
                == ["language"])
        #expect(
            try await workspace.complete(["prefs", "--suite", "app", "log", "--since", "3", "d"])
                == ["dark_mode"])
        #expect(try await workspace.complete(["prefs", "revert", "1", "--"]).contains("--force"))
        let restore = try await workspace.complete(["prefs", "restore", "--"])
        #expect(restore.contains("--to") && restore.contains("--dry-run"), "\(restore)")
        #expect(
            try await workspace.complete(["prefs", "--suite", "app", "watch", "--since", "3", "m"])
                == ["map_zoom"])
    }

    @Test(.enabled(if: CompletionShells.fish != nil, "fish is not installed"))
    func fishOffersTheHistoryCommandsOptionsAndKeys() async throws {
        try await workspace.makeStores()
        #expect(
            try await workspace.fishCompletions("prefs log --m") == ["--manifest", "--max-count"])
        #expect(try await workspace.fishCompletions("prefs restore --d") == ["--dry-run"])
        #expect(try await workspace.fishCompletions("prefs --suite app log -n 5 l") == ["language"])
    }
}
