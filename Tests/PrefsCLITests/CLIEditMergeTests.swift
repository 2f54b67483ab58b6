import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences
@testable import PrefsCLI

/// `prefs edit` against changes another process makes while the editor is
/// open: the store is not locked meanwhile, and the edit is merged three
/// ways against the values the editor was shown.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIEditMergeTests {
    /// a = 1, b = "x", started with an editor that waits for `go` and then
    /// writes `edited`; returns once the editor runs.
    func editing(_ edited: String) async throws -> (EditWorkspace, RunningProcess) {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([["set", "a", "1"], ["set", "b", "x"]])
        let child = try edit.startEdit(editor: try edit.waitingEditor(edited))
        try await edit.waitForFile("started")
        return (edit, child)
    }

    @Test func theStoreIsNotLockedWhileTheEditorRunsAndAStoreOnlyChangeIsKept() async throws {
        let (edit, child) = try await editing(#"{"a": 2, "b": "x"}"#)
        // The library waits up to 10 s for a lock, then fails with status 5;
        // the editor goes on only after this set, so a lock held while it
        // runs would fail the set, however long a loaded run takes.
        let set = try await edit.workspace.prefs("set", "b", "y", timeout: .seconds(60))
        #expect(set.status == 0, "\(set.standardError)")
        #expect(try await edit.workspace.storedValues() == ["a": 1, "b": "y"])

        try write("", to: edit.file("go"))
        let output = try await child.result()
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "a: 1 → 2\n")
        // b keeps the value set meanwhile: the editor left it as it was shown.
        #expect(try await edit.workspace.storedValues() == ["a": 2, "b": "y"])
        let history = try await edit.workspace.libraryHistory()
        #expect(history.latest == 4)
        #expect(history.entries.last?.changes == ["a": .init(old: 1, new: 2)])
    }

    @Test(arguments: [
        // The store changed a key the editor changed too.
        (["set", "a", "7"], #"{"a": 2, "b": "x"}"#, "'a'"),
        // The store removed a key the editor changed.
        (["delete", "b"], #"{"a": 1, "b": "z"}"#, "'b'"),
        // The store changed a key the editor removed.
        (["set", "b", "y"], #"{"a": 1}"#, "'b'"),
        // Both added a key, with different values.
        (["set", "c", "1"], #"{"a": 1, "b": "x", "c": 2}"#, "'c'"),
        // Two keys: one in conflict by each way; a third key edited alone.
        (["clear"], #"{"a": 5, "b": "z", "d": true}"#, "'a', 'b'"),
    ])
    func aKeyChangedOnBothSidesIsAConflictWritingNothing(
        store command: [String], edited: String, keys: String
    ) async throws {
        let (edit, child) = try await editing(edited)
        try await edit.workspace.prefsSucceeding([command])
        let before = try edit.workspace.fileState()
        try write("", to: edit.file("go"))
        let output = try await child.result()
        #expect(output.status == 3)
        #expect(output.standardOutput == "")
        let kept = try #require(output.keptCopy, "\(output.standardError)")
        #expect(
            output.standardError
                == "prefs: error: these keys changed both in your edit and in the store meanwhile: "
                + "\(keys); nothing was written; your edit is kept in \(kept)\n")
        #expect(contents(URL(fileURLWithPath: kept)) == edited)
        #expect(try edit.workspace.fileState() == before)
    }

    @Test func theSameChangeOnBothSidesIsNoConflict() async throws {
        let (edit, child) = try await editing(#"{"a": 2, "b": "x", "c": true}"#)
        try await edit.workspace.prefsSucceeding([["set", "a", "2"]])
        try write("", to: edit.file("go"))
        let output = try await child.result()
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "c: (unset) → true\n")
        #expect(try await edit.workspace.storedValues() == ["a": 2, "b": "x", "c": true])
    }

    @Test func anEditTheStoreAlreadyHoldsWritesNothing() async throws {
        let (edit, child) = try await editing(#"{"a": 2, "b": "x"}"#)
        try await edit.workspace.prefsSucceeding([["set", "a", "2"]])
        let before = try edit.workspace.fileState()
        try write("", to: edit.file("go"))
        let output = try await child.result()
        #expect(output.status == 0, "\(output.standardError)")
        #expect(
            output.standardOutput == "nothing changed: the store already holds the edited values\n")
        #expect(try edit.workspace.fileState() == before)
        #expect(try edit.copyDirectories() == [])
    }

    // MARK: The merge itself

    typealias Change = ThreeWayMerge.Change

    @Test func theMergeAppliesEditorOnlyChangesAndNamesConflicts() {
        let base: [String: PreferenceValue] = ["a": 1, "b": 1, "c": 1, "gone": 1]
        let merge = ThreeWayMerge(
            base: base, edited: ["a": 2, "b": 1, "c": 1, "new": true])
        #expect(
            merge.changes == [
                "a": Change(old: 1, new: 2), "gone": Change(old: 1, new: nil),
                "new": Change(old: nil, new: true),
            ])
        // Only the editor changed anything.
        #expect(
            merge.outcome(current: base)
                == .apply([
                    "a": Change(old: 1, new: 2), "gone": Change(old: 1, new: nil),
                    "new": Change(old: nil, new: true),
                ]))
        // The store changed b and c meanwhile: they are not touched.
        #expect(
            merge.outcome(current: ["a": 1, "b": 5, "gone": 1])
                == .apply([
                    "a": Change(old: 1, new: 2), "gone": Change(old: 1, new: nil),
                    "new": Change(old: nil, new: true),
                ]))
        // The store made the editor's change to a already.
        #expect(
            merge.outcome(current: ["a": 2, "b": 1, "c": 1, "gone": 1])
                == .apply([
                    "gone": Change(old: 1, new: nil), "new": Change(old: nil, new: true),
                ]))
        // Different changes on both sides, in byte order.
        #expect(
            merge.outcome(current: ["a": 3, "b": 1, "gone": 2, "new": false])
                == .conflict(["a", "gone", "new"]))
        // An int is not the double of the same number.
        #expect(merge.outcome(current: ["a": 1.0, "gone": 1]) == .conflict(["a"]))
        #expect(ThreeWayMerge(base: base, edited: base).changes.isEmpty)
    }
}
