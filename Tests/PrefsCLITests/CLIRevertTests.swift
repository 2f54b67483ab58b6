import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs revert SEQ [--force]`: one change undone, as a new change.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIRevertTests {
    @Test func revertPutsBackTheOldValuesAsANewChange() async throws {
        let workspace = try CLIWorkspace()
        // a = 1 (#1), b = "x" (#2), a = 2 (#3).
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "x"], ["set", "a", "2"],
        ])
        let output = try await workspace.prefs("revert", "3")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "reverted #3 as #4\n")
        #expect(output.standardError == "")
        #expect(try await workspace.storedValues() == ["a": 1, "b": "x"])
        let logged = try await workspace.prefs("log", "-n", "1")
        #expect(logged.line.hasPrefix("#4 "))
        #expect(logged.line.hasSuffix(" via prefs (revert #3): a 2 → 1"), "\(logged.line)")

        // Reverting a change that set a key for the first time removes it.
        #expect(try await workspace.prefs("revert", "2").standardOutput == "reverted #2 as #5\n")
        #expect(try await workspace.storedValues() == ["a": 1])
        let history = try await workspace.libraryHistory()
        #expect(history.latest == 5)
        #expect(history.entries.last?.changes == ["b": .init(old: "x", new: nil)])
    }

    @Test func aKeyChangedSinceRefusesTheRevertUnlessForced() async throws {
        let workspace = try CLIWorkspace()
        // a = 1 (#1), a = 2 (#2), b = 1 (#3), a = 3 (#4).
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "a", "2"], ["set", "b", "1"], ["set", "a", "3"],
        ])
        let before = try workspace.fileState()
        let refused = try await workspace.prefs("revert", "2")
        #expect(refused.status == 3)
        #expect(refused.standardOutput == "")
        #expect(
            refused.standardError
                == "prefs: error: change #2 cannot be reverted: these keys changed since: 'a'\n")
        #expect(try workspace.fileState() == before)

        let forced = try await workspace.prefs("revert", "2", "--force")
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(forced.standardOutput == "reverted #2 as #5\n")
        #expect(try await workspace.storedValues() == ["a": 1, "b": 1])
    }

    @Test func theConflictNamesEveryKeyThatChangedSince() async throws {
        let workspace = try CLIWorkspace()
        // a = 1 (#1), b = 2 (#2), clear (#3, both), a = 5 (#4).
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "2"], ["clear"], ["set", "a", "5"],
        ])
        let one = try await workspace.prefs("revert", "3")
        #expect(one.status == 3)
        #expect(one.standardError.hasSuffix(": 'a'\n"), "\(one.standardError)")
        try await workspace.prefsSucceeding([["set", "b", "6"]])
        let before = try workspace.fileState()
        let two = try await workspace.prefs("revert", "3")
        #expect(two.status == 3)
        #expect(
            two.standardError
                == "prefs: error: change #3 cannot be reverted: these keys changed since: 'a', 'b'\n"
        )
        #expect(try workspace.fileState() == before)
        #expect(try await workspace.prefs("revert", "3", "--force").line == "reverted #3 as #6")
        #expect(try await workspace.storedValues() == ["a": 1, "b": 2])
    }

    @Test func forcingOverKeysThatHoldTheOldValuesWritesNothing() async throws {
        let workspace = try CLIWorkspace()
        // a = 1 (#1), a = 2 (#2), a = 1 (#3).
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "a", "2"], ["set", "a", "1"],
        ])
        let before = try workspace.fileState()
        let output = try await workspace.prefs("revert", "2", "--force")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "nothing to revert: the keys already hold those values\n")
        #expect(try workspace.fileState() == before)
    }

    @Test(arguments: [
        ("11", "change #11 has not been made: the last change is #10"),
        ("0", "there is no change #0: changes are numbered from 1"),
    ])
    func aChangeNotMadeIsStatusThreeNamingTheLastChange(sequence: String, reason: String)
        async throws
    {
        let workspace = try CLIWorkspace()
        try workspace.writeTrimmedHistory()
        let before = try workspace.fileState()
        let output = try await workspace.prefs("revert", sequence)
        #expect(output.status == 3)
        #expect(output.standardError == "prefs: error: \(reason)\n")
        #expect(try workspace.fileState() == before)
    }

    @Test func revertingPastTheOnlyChangeNamesItAsTheLast() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefsSucceeding([["set", "a", "1"]])
        for arguments in [["revert", "99"], ["restore", "--to", "99"]] {
            let output = try await workspace.prefs(arguments)
            #expect(output.status == 3)
            #expect(
                output.standardError
                    == "prefs: error: change #99 has not been made: the last change is #1\n")
        }
    }

    @Test(arguments: ["3", "8"])
    func aChangeTheHistoryDoesNotKeepIsStatusThreeNamingTheOldestKept(sequence: String)
        async throws
    {
        let workspace = try CLIWorkspace()
        try workspace.writeTrimmedHistory()
        let before = try workspace.fileState()
        let output = try await workspace.prefs("revert", sequence)
        #expect(output.status == 3)
        #expect(output.standardOutput == "")
        #expect(
            output.standardError
                == "prefs: error: change #\(sequence) is not in the history kept (the oldest kept is #9)\n"
        )
        #expect(try workspace.fileState() == before)
        // The oldest kept can be reverted.
        #expect(try await workspace.prefs("revert", "9", "--force").line == "reverted #9 as #11")
    }

    @Test(arguments: [
        ([], "missing SEQ"),
        (["x"], "invalid sequence number 'x' (use a change's number from 'prefs log')"),
        (["-1"], "invalid sequence number '-1'"),
        (["1", "2"], "unexpected argument '2'"),
        (["1", "--frobnicate"], "unknown option '--frobnicate'"),
    ])
    func badArgumentsAreUsageErrors(arguments: [String], message: String) async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefsSucceeding([["set", "a", "1"]])
        let before = try workspace.fileState()
        let output = try await workspace.prefs(["revert"] + arguments)
        output.expectUsageError(
            "prefs revert SEQ [--force] [--wait [TIMEOUT]] (see 'prefs revert --help')",
            message: message)
        #expect(try workspace.fileState() == before)
    }
}
