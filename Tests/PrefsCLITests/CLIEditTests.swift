import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs edit`: the copy the editor gets, which editor, and what a save
/// (or a failing editor) does to the store, without a terminal.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIEditTests {
    /// a = 1, b = "x", list = [1, 2].
    func seeded() async throws -> EditWorkspace {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "x"], ["set", "list", "[1,2]", "--type", "json"],
        ])
        return edit
    }

    @Test func theEditorsChangesAreWrittenAsOneChangeAttributedToEdit() async throws {
        let edit = try await seeded()
        // a changed, b removed, c added, list left as it was.
        let editor = try edit.writingEditor(#"{"a": 2, "c": {"on": true}, "list": [1, 2]}"#)
        let output = try await edit.edit(editor: editor)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(
            output.standardOutput == "a: 1 → 2\nb: \"x\" → (unset)\nc: (unset) → {\"on\":true}\n")
        #expect(output.standardError == "")
        #expect(
            try await edit.workspace.storedValues() == ["a": 2, "c": ["on": true], "list": [1, 2]])
        let history = try await edit.workspace.libraryHistory()
        #expect(history.latest == 4)
        let entry = try #require(history.entries.last)
        #expect(entry.cause == "edit")
        #expect(
            entry.changes == [
                "a": .init(old: 1, new: 2), "b": .init(old: "x", new: nil),
                "c": .init(old: nil, new: ["on": true]),
            ])
        // The copy and its directory are gone.
        #expect(try edit.copyDirectories() == [])
        let copy = try #require(edit.recordedCopyPath())
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test func theCopyIsPrettyJSONOfTheValuesWithSortedKeysInAPrivateDirectory() async throws {
        let edit = try await seeded()
        let child = try edit.startEdit(editor: try edit.waitingEditor("{}"))
        try await edit.waitForFile("started")
        let copy = try #require(edit.recordedCopyPath())
        #expect(
            contents(edit.file("shown.json"))
                == "{\n  \"a\" : 1,\n  \"b\" : \"x\",\n  \"list\" : [\n    1,\n    2\n  ]\n}\n")
        #expect(try permissions(URL(fileURLWithPath: copy)) == 0o600)
        let folder = URL(fileURLWithPath: copy).deletingLastPathComponent()
        #expect(try permissions(folder) == 0o700)
        #expect(folder.lastPathComponent.hasPrefix("prefs-edit."))
        // Named after the store, so that editors show JSON.
        #expect(URL(fileURLWithPath: copy).lastPathComponent == "prefs.json")
        #expect(fileStatus(copy)?.st_uid == getuid())
        try write("", to: edit.file("go"))
        let output = try await child.result()
        // Every key removed.
        #expect(output.status == 0, "\(output.standardError)")
        #expect(try await edit.workspace.storedValues() == [:])
    }

    @Test func anEmptyStoreIsShownAsAnEmptyObject() async throws {
        let edit = try EditWorkspace()
        let editor = try edit.script(
            "editor",
            "cp \"$1\" '\(edit.file("shown.json").path)'; printf '{\"k\": \"v\"}' > \"$1\"")
        let output = try await edit.edit(editor: editor)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(contents(edit.file("shown.json")) == "{}\n")
        #expect(try await edit.workspace.storedValues() == ["k": "v"])
    }

    @Test(arguments: [
        ("unchanged", "exit 0"),
        // Other spacing and order, the same values.
        ("the same values", #"printf '{"list":[1,2],"b":"x","a":1}' > "$1""#),
    ])
    func aCopyWithTheSameValuesWritesNothing(_ what: String, body: String) async throws {
        let edit = try await seeded()
        let before = try edit.workspace.fileState()
        let output = try await edit.edit(editor: try edit.script("editor", body))
        #expect(output.status == 0, "\(what): \(output.standardError)")
        #expect(output.standardOutput == "nothing changed\n")
        #expect(output.standardError == "")
        #expect(try edit.workspace.fileState() == before)
        #expect(try edit.copyDirectories() == [])
    }

    @Test(arguments: [
        (#"{"a": 2, "b": "x""#, "the edited copy is not valid JSON: line 1, column 18: "),
        (#"[1, 2]"#, "the edited copy must be one JSON object of key → value, not an array"),
        (#"{"": 1}"#, "invalid key '': keys may not be empty"),
    ])
    func aCopyTheStoreCannotTakeIsStatusThreeKeepingTheCopy(text: String, problem: String)
        async throws
    {
        let edit = try await seeded()
        let before = try edit.workspace.fileState()
        let output = try await edit.edit(editor: try edit.writingEditor(text))
        #expect(output.status == 3)
        #expect(output.standardOutput == "")
        #expect(
            output.standardError.hasPrefix("prefs: error: \(problem)"), "\(output.standardError)")
        #expect(output.standardError.split(separator: "\n").count == 1)
        #expect(output.standardError.contains("; nothing was written; your edit is kept in /"))
        let kept = try #require(output.keptCopy, "\(output.standardError)")
        #expect(kept == edit.recordedCopyPath())
        #expect(contents(URL(fileURLWithPath: kept)) == text)
        #expect(try permissions(URL(fileURLWithPath: kept)) == 0o600)
        #expect(try edit.workspace.fileState() == before)
    }

    @Test func aValueTheManifestRefusesIsStatusThreeKeepingTheCopy() async throws {
        let edit = try await seeded()
        let manifest = try edit.manifest(
            #"{"format":1,"keys":{"port":{"type":"int","minimum":1,"maximum":65535},"#
                + #""mode":{"type":"string","enum":["fast","safe"]}}}"#)
        let before = try edit.workspace.fileState()
        let text = #"{"a": 1, "b": "x", "list": [1, 2], "port": 70000, "mode": "slow"}"#
        let output = try await edit.edit(
            editor: try edit.writingEditor(text), arguments: ["--manifest", manifest])
        #expect(output.status == 3)
        let kept = try #require(output.keptCopy, "\(output.standardError)")
        #expect(
            output.standardError
                == "keys the manifest declares that are not set (add one to the object to set it):\n"
                + "  mode: string\n  port: int\n"
                + "prefs: error: key 'mode' must be one of \"fast\", \"safe\", not \"slow\"; "
                + "key 'port' must be at most 65535, not 70000; "
                + "nothing was written; your edit is kept in \(kept)\n")
        #expect(contents(URL(fileURLWithPath: kept)) == text)
        #expect(try edit.workspace.fileState() == before)
    }

    @Test func storedValuesTheEditLeavesAloneAreNotCheckedAgainstTheManifest() async throws {
        let edit = try await seeded()
        // a = 1 is stored, though the manifest now wants at least 5.
        let manifest = try edit.manifest(
            #"{"format":1,"keys":{"a":{"type":"int","minimum":5}}}"#)
        let output = try await edit.edit(
            editor: try edit.writingEditor(#"{"a": 1, "b": "y", "list": [1, 2]}"#),
            arguments: ["--manifest", manifest])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "b: \"x\" → \"y\"\n")
    }

    @Test func declaredKeysThatAreNotSetAreListedBeforeTheEditorOpensAndTheCopyStaysPure()
        async throws
    {
        let edit = try await seeded()
        let manifest = try edit.manifest(
            #"{"format":1,"keys":{"a":{"type":"int","default":0},"#
                + #""language":{"type":"string","default":"en","description":"Interface language"},"#
                + #""token":{"type":"string"}}}"#)
        let editor = try edit.script(
            "editor",
            """
            cp "$1" '\(edit.file("shown.json").path)'
            printf '{"a": 1, "b": "x", "list": [1, 2], "language": "fr"}' > "$1"
            """)
        let output = try await edit.edit(editor: editor, arguments: ["--manifest", manifest])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(
            output.standardError
                == "keys the manifest declares that are not set (add one to the object to set it):\n"
                + "  language: string = \"en\"  # Interface language\n"
                + "  token: string\n")
        #expect(output.standardOutput == "language: (unset) → \"fr\"\n")
        // The copy holds the stored values only.
        #expect(
            contents(edit.file("shown.json"))
                == "{\n  \"a\" : 1,\n  \"b\" : \"x\",\n  \"list\" : [\n    1,\n    2\n  ]\n}\n")
    }

    @Test func aFailingEditorIsStatusFiveWritingNothing() async throws {
        let edit = try await seeded()
        let before = try edit.workspace.fileState()
        let editor = try edit.script(
            "editor",
            """
            printf '{"a": 5}' > "$1"
            printf '%s' "$1" > '\(edit.file("copy-path").path)'
            exit 1
            """)
        let output = try await edit.edit(editor: editor)
        #expect(output.status == 5)
        let kept = try #require(output.keptCopy, "\(output.standardError)")
        #expect(
            output.standardError
                == "prefs: error: the editor (\(editor)) exited with status 1; nothing was written; "
                + "your edit is kept in \(kept)\n")
        #expect(kept == edit.recordedCopyPath())
        #expect(contents(URL(fileURLWithPath: kept)) == #"{"a": 5}"#)
        #expect(try edit.workspace.fileState() == before)
    }

    @Test func anEditorEndedByASignalIsStatusFiveWritingNothing() async throws {
        let edit = try await seeded()
        let before = try edit.workspace.fileState()
        let editor = try edit.script("editor", "printf '{\"a\": 5}' > \"$1\"\nkill -TERM $$")
        let output = try await edit.edit(editor: editor)
        #expect(output.status == 5)
        // The shell that runs the editor reports its end as status 128 + 15;
        // a shell that execs the editor leaves the signal itself.
        let endings = ["exited with status 143", "was killed by signal 15"]
        #expect(
            endings.contains {
                output.standardError.contains("prefs: error: the editor (\(editor)) \($0); ")
            }, "\(output.standardError)")
        #expect(output.keptCopy != nil)
        #expect(try edit.workspace.fileState() == before)
    }

    @Test func anEditorThatCannotBeFoundIsStatusFive() async throws {
        let edit = try await seeded()
        let output = try await edit.edit(editor: edit.file("no-such-editor").path)
        #expect(output.status == 5)
        #expect(output.standardError.contains("exited with status 127"), "\(output.standardError)")
        #expect(output.keptCopy != nil)
    }

    // MARK: Which editor

    /// Scripts `visual`, `editor` and `bin/vi` that record their name and
    /// arguments in `ran`, one a line, and change nothing.
    func recordingEditors(_ edit: EditWorkspace) throws {
        try FileManager.default.createDirectory(
            at: edit.file("bin"), withIntermediateDirectories: true)
        for name in ["visual", "editor", "bin/vi", "my editor"] {
            try edit.script(
                name, "printf '%s\\n' '\(name)' \"$@\" > '\(edit.file("ran").path)'")
        }
    }

    @Test func visualComesFirstThenEditorThenVi() async throws {
        let edit = try await seeded()
        try recordingEditors(edit)
        let visual = edit.file("visual").path
        let editor = edit.file("editor").path
        let path = edit.file("bin").path + ":/usr/bin:/bin"

        func ran(_ environment: [String: String]) async throws -> [String] {
            var environment = environment
            environment["PATH"] = path
            let output = try await edit.edit(editor: nil, environment: environment)
            #expect(output.standardOutput == "nothing changed\n", "\(output.standardError)")
            let lines = try #require(contents(edit.file("ran"))).split(separator: "\n")
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.last?.hasSuffix("/prefs.json") == true)
            return lines.dropLast().map(String.init)
        }
        #expect(try await ran(["VISUAL": visual, "EDITOR": editor]) == ["visual"])
        #expect(try await ran(["VISUAL": "", "EDITOR": editor]) == ["editor"])
        #expect(try await ran(["EDITOR": editor]) == ["editor"])
        #expect(try await ran([:]) == ["bin/vi"])
    }

    @Test func theVariableIsAShellCommandLineAndTheCopyItsLastArgument() async throws {
        let edit = try await seeded()
        try recordingEditors(edit)
        // A path with a space, quoted, and arguments, as `code --wait`.
        let command = "'\(edit.file("my editor").path)' --wait -n"
        let output = try await edit.edit(
            editor: command, environment: ["TMPDIR": edit.directory.path])
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try #require(contents(edit.file("ran"))).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(Array(lines.prefix(3)) == ["my editor", "--wait", "-n"])
        #expect(lines.last?.hasPrefix(edit.directory.path + "/prefs-edit.") == true)
        #expect(output.standardError == "")
    }

    @Test func editHasHelpWithExamples() async throws {
        let output = try await runChild("prefs", ["edit", "--help"])
        #expect(output.status == 0)
        #expect(output.standardOutput.hasPrefix("usage: prefs edit [--wait [TIMEOUT]] [--force]\n"))
        #expect(output.standardOutput.contains("examples:\n  prefs edit\n"))
        let extra = try await runChild("prefs", ["edit", "extra"])
        #expect(extra.status == 2)
    }
}
