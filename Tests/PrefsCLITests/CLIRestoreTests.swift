import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs restore --to SEQ|TIME [--dry-run]`: an earlier state, as a new change.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIRestoreTests {
    /// a = 1 (#1), b = "x" (#2), a = 2 (#3), b removed (#4), c = true (#5).
    func workspaceWithChanges() async throws -> CLIWorkspace {
        let workspace = try CLIWorkspace()
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "x"], ["set", "a", "2"], ["delete", "b"],
            ["set", "c", "true"],
        ])
        return workspace
    }

    @Test func restoreGoesBackAndForwardAgain() async throws {
        let workspace = try await workspaceWithChanges()
        let back = try await workspace.prefs("restore", "--to", "2")
        #expect(back.status == 0, "\(back.standardError)")
        #expect(back.standardOutput == "restored to #2 as #6\n")
        #expect(back.standardError == "")
        #expect(try await workspace.prefs("list").standardOutput == "a = 1\nb = \"x\"\n")
        let logged = try await workspace.prefs("log", "-n", "1")
        #expect(
            logged.line.hasSuffix(
                #" via prefs (restore to #2): a 2 → 1, b (unset) → "x", c true → (unset)"#),
            "\(logged.line)")

        let forward = try await workspace.prefs("restore", "--to", "5")
        #expect(forward.standardOutput == "restored to #5 as #7\n")
        #expect(try await workspace.prefs("list").standardOutput == "a = 2\nc = true\n")

        let before = try workspace.fileState()
        let again = try await workspace.prefs("restore", "--to", "7")
        #expect(again.status == 0)
        #expect(again.standardOutput == "nothing to restore: the store holds that state\n")
        #expect(try workspace.fileState() == before)

        // 0: before any change.
        #expect(try await workspace.prefs("restore", "--to=0").line == "restored to #0 as #8")
        #expect(try await workspace.storedValues() == [:])
    }

    @Test func dryRunPrintsTheDifferenceAndWritesNothing() async throws {
        let workspace = try await workspaceWithChanges()
        let before = try workspace.fileState()
        let output = try await workspace.prefs("restore", "--to", "2", "--dry-run")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError == "")
        #expect(output.standardOutput == "a: 2 → 1\nb: (unset) → \"x\"\nc: true → (unset)\n")
        #expect(try workspace.fileState() == before)

        // Nothing would change: nothing printed.
        let same = try await workspace.prefs("restore", "--dry-run", "--to", "5")
        #expect(same.status == 0)
        #expect(same.standardOutput == "")
        #expect(try workspace.fileState() == before)
    }

    @Test func dryRunShowsValuesAsCompactJSON() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefsSucceeding([
            ["set", "list", #"[1, {"b": "two"}]"#, "--type", "json"],
            ["set", "list", "[]", "--type", "json"],
        ])
        let output = try await workspace.prefs("restore", "--to", "1", "--dry-run")
        #expect(output.standardOutput == #"list: [] → [1,{"b":"two"}]"# + "\n")
    }

    @Test func restoreToATimeIsTheStateAfterTheLastChangeMadeByThen() async throws {
        let workspace = try await workspaceWithChanges()
        let entries = try await workspace.libraryHistory().entries
        try #require(entries.count == 5)
        try #require(entries[1].date < entries[2].date)
        let time = entries[1].timestamp
        let byNumber = try await workspace.prefs("restore", "--to", "2", "--dry-run")
        let dryRun = try await workspace.prefs("restore", "--to", time, "--dry-run")
        #expect(dryRun.status == 0, "\(dryRun.standardError)")
        #expect(dryRun.standardOutput == byNumber.standardOutput)
        let output = try await workspace.prefs("restore", "--to", time)
        #expect(output.standardOutput == "restored to #2 as #6\n")
        #expect(try await workspace.storedValues() == ["a": 1, "b": "x"])
    }

    @Test func aStateOlderThanTheHistoryKeptIsStatusThreeNamingTheOldestKept() async throws {
        let workspace = try CLIWorkspace()
        try workspace.writeTrimmedHistory()
        let before = try workspace.fileState()
        for arguments in [["--to", "5"], ["--to", "5", "--dry-run"]] {
            let output = try await workspace.prefs(["restore"] + arguments)
            #expect(output.status == 3)
            #expect(output.standardOutput == "")
            #expect(
                output.standardError
                    == "prefs: error: change #5 is not in the history kept (the oldest kept is #9)\n"
            )
        }
        let early = try await workspace.prefs("restore", "--to", "2026-12-01T09:00:00Z")
        #expect(early.status == 3)
        #expect(
            early.standardError
                == "prefs: error: the history kept does not reach back to 2026-12-01T09:00:00Z (the oldest kept is #9)\n"
        )
        #expect(try workspace.fileState() == before)

        // As far back as the history reaches: right after #8, undoing #9 and #10.
        #expect(try await workspace.prefs("restore", "--to", "8").line == "restored to #8 as #11")
        #expect(try await workspace.storedValues() == ["a": 8])
        // A time between #9 and #10.
        #expect(
            try await workspace.prefs("restore", "--to", "2026-12-01T10:00:09.500Z").line
                == "restored to #9 as #12")
        #expect(try await workspace.storedValues() == ["a": 9])
    }

    @Test(arguments: [
        ([], "missing --to SEQ|TIME"),
        (["--dry-run"], "missing --to SEQ|TIME"),
        (["--to"], "option '--to' needs a value (SEQ|TIME)"),
        (["--to", "soon"], "invalid --to 'soon' (use a sequence number or an ISO 8601 time"),
        (["--to", "2", "3"], "unexpected argument '3'"),
    ])
    func badOptionsAreUsageErrors(arguments: [String], message: String) async throws {
        let workspace = try await workspaceWithChanges()
        let before = try workspace.fileState()
        let output = try await workspace.prefs(["restore"] + arguments)
        output.expectUsageError(
            "prefs restore --to SEQ|TIME [--dry-run] [--wait [TIMEOUT]] (see 'prefs restore --help')",
            message: message)
        #expect(try workspace.fileState() == before)
    }
}
