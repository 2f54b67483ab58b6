import Foundation
import PreferencesTestSupport
import Testing

/// The completion scripts pick `diff` and `apply` up from the command list:
/// their names, their options, and FILE as a path.
@Suite(
    .enabled("bash 4 or later is not installed") { try await CompletionShells.bash() != nil },
    .scaledTimeLimit(minutes: 5))
struct CLIApplyDiffCompletionTests {
    let workspace: CompletionWorkspace

    init() throws {
        workspace = try CompletionWorkspace()
    }

    @Test func namesOptionsAndFilesComplete() async throws {
        #expect(try await workspace.complete(["prefs", "di"]) == ["diff"])
        #expect(try await workspace.complete(["prefs", "ap"]) == ["apply"])
        #expect(try await workspace.complete(["prefs", "apply", "x", "--d"]) == ["--dry-run"])
        #expect(try await workspace.complete(["prefs", "apply", "x", "--pr"]) == ["--prune"])
        #expect(try await workspace.complete(["prefs", "diff", "x", "--pr"]) == ["--prune"])

        let desired = workspace.directory.file("desired.json")
        try write("{}", to: desired)
        let prefix = workspace.directory.file("des").path
        #expect(try await workspace.complete(["prefs", "diff", prefix]) == [desired.path])
        #expect(try await workspace.complete(["prefs", "apply", prefix]) == [desired.path])
    }
}
