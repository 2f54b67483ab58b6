import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs diff FILE [--prune]` and `prefs apply FILE [--dry-run] [--prune]`
/// (their rows in the commands table, and 7.3, in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md):
/// statuses, lines, one change or nothing.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIApplyDiffTests {
    let workspace: CLIWorkspace

    init() throws {
        workspace = try CLIWorkspace()
    }

    /// a = 1 (#1), b = "x" (#2), gone = true (#3).
    func storeThreeKeys() async throws {
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "x"], ["set", "gone", "true"],
        ])
    }

    /// Writes `text` to a file named `name` in the workspace.
    func desired(_ text: String, name: String = "desired.json") throws -> URL {
        let url = workspace.file(name)
        try write(text, to: url)
        return url
    }

    @Test func diffExitsZeroWithoutDifferencesAndOneWithThem() async throws {
        try await storeThreeKeys()
        let before = try workspace.fileState()

        let same = try await workspace.prefs(
            "diff", try desired(#"{"a": 1, "b": "x"}"#, name: "same.json").path)
        #expect(same.status == 0, "\(same.standardError)")
        #expect(same.standardOutput == "")
        #expect(same.standardError == "")

        let file = try desired(#"{"a": 2, "b": "x", "c": [1, {"d": null}], "e\#u{301}": true}"#)
        let differs = try await workspace.prefs("diff", file.path)
        #expect(differs.status == 1, "\(differs.standardError)")
        #expect(differs.standardError == "")
        #expect(
            differs.lines == [
                "a: 1 → 2", #"c: (unset) → [1,{"d":null}]"#, "e\u{301}: (unset) → true",
            ])

        let pruned = try await workspace.prefs("diff", file.path, "--prune")
        #expect(pruned.status == 1)
        #expect(pruned.lines.count == 4)
        #expect(pruned.lines.contains("gone: true → (unset)"))

        // A stored key FILE does not name is no difference without --prune.
        let subset = try await workspace.prefs(
            "diff", try desired(#"{"a": 1}"#, name: "subset.json").path)
        #expect(subset.status == 0)
        let subsetPruned = try await workspace.prefs(
            "diff", "--prune", workspace.file("subset.json").path)
        #expect(subsetPruned.status == 1)
        #expect(subsetPruned.lines == [#"b: "x" → (unset)"#, "gone: true → (unset)"])

        // diff never writes.
        #expect(try workspace.fileState() == before)
    }

    @Test func diffOfAStoreThatDoesNotExistCreatesNothing() async throws {
        let output = try await workspace.prefs("diff", try desired(#"{"a": 1}"#).path)
        #expect(output.status == 1)
        #expect(output.standardOutput == "a: (unset) → 1\n")
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test func applyWritesEveryChangeInOneChange() async throws {
        try await storeThreeKeys()
        let file = try desired(#"{"a": 2, "b": "x", "c": [1], "d": {"k": "v"}}"#)
        let output = try await workspace.prefs("apply", file.path)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError == "")
        #expect(output.standardOutput == "applied 3 changes as #4\n")
        #expect(
            try await workspace.storedValues() == [
                "a": 2, "b": "x", "c": [1], "d": ["k": "v"], "gone": true,
            ])
        let logged = try await workspace.prefs("log", "-n", "1")
        #expect(
            logged.line.hasSuffix(
                #" via prefs (apply): a 1 → 2, c (unset) → [1], d (unset) → {"k":"v"}"#),
            "\(logged.line)")
        #expect(try await workspace.libraryHistory().latest == 4)

        let one = try await workspace.prefs(
            "apply", try desired(#"{"a": 3}"#, name: "one.json").path)
        #expect(one.standardOutput == "applied 1 change as #5\n")
        #expect(try await workspace.prefs("diff", file.path).lines == ["a: 3 → 2"])
    }

    @Test func pruneRemovesTheStoredKeysFileDoesNotName() async throws {
        try await storeThreeKeys()
        let file = try desired(#"{"a": 1, "new": "n"}"#)
        let output = try await workspace.prefs("apply", "--prune", file.path)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "applied 3 changes as #4\n")
        #expect(try await workspace.storedValues() == ["a": 1, "new": "n"])
        let logged = try await workspace.prefs("log", "-n", "1")
        #expect(
            logged.line.hasSuffix(
                #" via prefs (apply): b "x" → (unset), gone true → (unset), new (unset) → "n""#),
            "\(logged.line)")
        #expect(try await workspace.prefs("diff", "--prune", file.path).status == 0)
    }

    @Test func withoutPruneTheOtherKeysStay() async throws {
        try await storeThreeKeys()
        let output = try await workspace.prefs("apply", try desired(#"{"a": 5}"#).path)
        #expect(output.standardOutput == "applied 1 change as #4\n")
        #expect(try await workspace.storedValues() == ["a": 5, "b": "x", "gone": true])
    }

    @Test func dryRunPrintsTheLinesAndLeavesTheFileAsItWas() async throws {
        try await storeThreeKeys()
        let before = try workspace.fileState()
        let file = try desired(#"{"a": 2, "b": "x", "c": null}"#)

        let output = try await workspace.prefs("apply", file.path, "--dry-run")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError == "")
        #expect(output.lines == ["a: 1 → 2", "c: (unset) → null"])

        let pruned = try await workspace.prefs("apply", file.path, "--dry-run", "--prune")
        #expect(pruned.status == 0)
        #expect(pruned.lines == ["a: 1 → 2", "c: (unset) → null", "gone: true → (unset)"])
        // The same lines as diff.
        #expect(try await workspace.prefs("diff", file.path, "--prune").lines == pruned.lines)

        let nothing = try await workspace.prefs(
            "apply", try desired(#"{"a": 1}"#, name: "same.json").path, "--dry-run")
        #expect(nothing.status == 0)
        #expect(nothing.standardOutput == "")
        #expect(try workspace.fileState() == before)
    }

    static let manifestText = """
        {
          "format" : 1,
          "keys" : {
            "key.0500" : { "type" : "int", "minimum" : 0, "maximum" : 100 },
            "key.0900" : { "type" : "string", "enum" : ["on", "off"] },
            "theme" : { "type" : "string", "enum" : ["dark", "light"] }
          }
        }
        """

    /// A file of 1,000 keys, key.0000 … key.0999, each an int equal to its
    /// number modulo 100, with `changes` applied.
    func thousandKeys(_ changes: [String: String] = [:]) throws -> URL {
        var members: [String] = []
        for number in 0..<1000 {
            let key = "key." + String(repeating: "0", count: 4 - String(number).count) + "\(number)"
            members.append("\"\(key)\": \(changes[key] ?? String(number % 100))")
        }
        return try desired(
            "{\n" + members.joined(separator: ",\n") + "\n}\n", name: "thousand.json")
    }

    @Test func aThousandKeysWithOneInvalidValueWriteNothingAndNameIt() async throws {
        let manifest = workspace.file("keys.json")
        try write(Self.manifestText, to: manifest)
        try await workspace.prefsSucceeding([["set", "key.0001", "1"], ["set", "theme", "dark"]])
        let before = try workspace.fileState()

        let file = try thousandKeys(["key.0500": "1000", "key.0900": #""on""#])
        for options in [[], ["--prune"], ["--dry-run"]] {
            let output = try await workspace.prefs(
                ["--manifest", manifest.path, "apply", file.path] + options)
            #expect(output.status == 3, "\(options): \(output.standardError)")
            #expect(output.standardOutput == "")
            #expect(
                output.standardError
                    == "prefs: error: nothing applied from \(file.path): a value does not fit the key manifest: key 'key.0500' must be at most 100, not 1000\n"
            )
            #expect(try workspace.fileState() == before)
        }

        // With every value valid, all 1,000 go in as one change.
        let valid = try thousandKeys(["key.0900": #""on""#])
        let applied = try await workspace.prefs(["--manifest", manifest.path, "apply", valid.path])
        #expect(applied.status == 0, "\(applied.standardError)")
        #expect(applied.standardOutput == "applied 999 changes as #3\n")
        #expect(try await workspace.storedValues().count == 1001)
    }

    @Test func everyFailingKeyIsNamedOnOneLine() async throws {
        // The manifest published beside the store, as `set` finds it.
        try write(Self.manifestText, to: workspace.file("prefs.keys.json"))
        let file = try thousandKeys(["key.0500": "-1", "key.0900": "1"])
        let output = try await workspace.prefs("apply", file.path)
        #expect(output.status == 3)
        #expect(
            output.standardError
                == "prefs: error: nothing applied from \(file.path): 2 values do not fit the key manifest: key 'key.0500' must be at least 0, not -1; key 'key.0900' must be a string, not an integer 1\n"
        )
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))

        // $PREFS_MANIFEST is followed too.
        let manifest = workspace.file("other-keys.json")
        try write(Self.manifestText, to: manifest)
        let themed = try desired(#"{"theme": "blue"}"#, name: "theme.json")
        let environment = try await workspace.prefs(
            environment: ["PREFS_MANIFEST": manifest.path],
            ["--file", workspace.file("elsewhere.json").path, "apply", themed.path])
        #expect(environment.status == 3)
        #expect(environment.standardError.contains("key 'theme' must be one of"))
    }

    @Test func aStoreFileIsTakenForItsValues() async throws {
        try await storeThreeKeys()
        let other = workspace.file("other.json")
        for arguments in [["set", "a", "9"], ["set", "z", "last"]] {
            let output = try await runChild("prefs", ["--file", other.path] + arguments)
            try #require(output.status == 0, "\(output.standardError)")
        }
        // A store file: format, values, modified, sequence, history.
        let text = try #require(contents(other))
        try #require(text.contains("\"format\"") && text.contains("\"history\""))

        let differs = try await workspace.prefs("diff", other.path, "--prune")
        #expect(differs.status == 1)
        #expect(
            differs.lines == [
                "a: 1 → 9", #"b: "x" → (unset)"#, "gone: true → (unset)", #"z: (unset) → "last""#,
            ])
        let applied = try await workspace.prefs("apply", other.path, "--prune")
        #expect(applied.standardOutput == "applied 4 changes as #4\n")
        #expect(try await workspace.storedValues() == ["a": 9, "z": "last"])
        #expect(try await workspace.prefs("diff", other.path).status == 0)
    }

    @Test(arguments: [
        ("{\n  \"a\": 1,\n  \"b\": tru\n}\n", ":3:8: "),
        (#"{"a": 1,"#, ":1:9: unexpected end of text"),
        (#"{"a": tru}"#, ":1:"),
        ("[1, 2]", ":1: the document is an array, not a JSON object"),
        ("", ":"),
        (#"{"format": 1, "values": [1]}"#, #": a store file whose "values" is an array"#),
        (#"{"format": 7, "values": {}}"#, ": a store file of unknown format 7"),
    ])
    func aMalformedFileIsStatusFourNamingIt(text: String, position: String) async throws {
        try await storeThreeKeys()
        let before = try workspace.fileState()
        let file = try desired(text)
        for arguments in [["diff"], ["apply"], ["apply", "--dry-run"], ["apply", "--prune"]] {
            let output = try await workspace.prefs(arguments + [file.path])
            #expect(output.status == 4, "\(arguments): \(output.standardError)")
            #expect(output.standardOutput == "")
            #expect(
                output.standardError.hasPrefix("prefs: error: \(file.path)\(position)"),
                "\(output.standardError)")
            #expect(output.standardError.filter { $0 == "\n" }.count == 1)
            #expect(try workspace.fileState() == before)
        }
    }

    @Test func applyingWhatTheStoreHoldsWritesNothing() async throws {
        try await storeThreeKeys()
        let file = try desired(#"{"a": 1, "b": "x", "gone": true}"#)
        let before = try workspace.fileState()
        for options in [[], ["--prune"]] {
            let output = try await workspace.prefs(["apply", file.path] + options)
            #expect(output.status == 0, "\(output.standardError)")
            #expect(output.standardOutput == "nothing to apply: the store holds these values\n")
            #expect(try workspace.fileState() == before)
        }
        #expect(try await workspace.libraryHistory().latest == 3)

        // Applied once, then again: the second writes nothing.
        let changed = try desired(#"{"a": 2, "c": [true]}"#, name: "changed.json")
        #expect(try await workspace.prefs("apply", changed.path).line == "applied 2 changes as #4")
        let after = try workspace.fileState()
        #expect(
            try await workspace.prefs("apply", changed.path).line
                == "nothing to apply: the store holds these values")
        #expect(try workspace.fileState() == after)
        #expect(try await workspace.libraryHistory().latest == 4)
    }

    @Test(arguments: [
        (["diff"], 2, "missing FILE; usage: prefs diff FILE [--prune]"),
        (["apply"], 2, "missing FILE; usage: prefs apply FILE [--dry-run] [--prune]"),
        (["apply", "a.json", "--forced"], 2, "unknown option '--forced'"),
        (["diff", "missing.json"], 5, "cannot open "),
        (["apply", "missing.json"], 5, "cannot open "),
    ])
    func usageAndIOErrorsKeepTheirStatuses(arguments: [String], status: Int32, message: String)
        async throws
    {
        // File names are in the workspace, where none exists.
        let resolved = arguments.map { $0.hasSuffix(".json") ? workspace.file($0).path : $0 }
        let output = try await workspace.prefs(resolved)
        #expect(output.status == status, "\(output.standardError)")
        #expect(output.standardOutput == "")
        #expect(output.standardError.contains(message), "\(output.standardError)")
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test func aKeyTheStoreCannotHoldAppliesNothing() async throws {
        try await storeThreeKeys()
        let before = try workspace.fileState()
        let output = try await workspace.prefs(
            "apply", try desired(#"{"a": 2, "": 1}"#).path)
        #expect(output.status == 3)
        #expect(output.standardError == "prefs: error: invalid key '': keys may not be empty\n")
        #expect(try workspace.fileState() == before)
    }
}
