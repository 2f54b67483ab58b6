import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PrefsCLI

/// How `prefs set` types its value (7.2 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
@Suite(.scaledTimeLimit(minutes: 10)) struct CLITypingTests {
    @Test(arguments: [
        ("true", PreferenceValue.bool(true)),
        ("false", .bool(false)),
        ("True", .string("True")),
        ("42", .int(42)),
        ("-7", .int(-7)),
        ("007", .int(7)),
        ("9223372036854775807", .int(Int64.max)),
        ("9223372036854775808", .string("9223372036854775808")),
        ("1e400", .string("1e400")),
        ("1.5", .double(1.5)),
        ("-0.25", .double(-0.25)),
        ("2e3", .double(2000)),
        (".5", .string(".5")),
        ("1.", .string("1.")),
        ("NaN", .string("NaN")),
        ("fr", .string("fr")),
        ("", .string("")),
        ("[1,2]", .string("[1,2]")),
    ])
    func untypedValuesAreInferred(text: String, expected: PreferenceValue) async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(["set", "k", "--", text])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(try await workspace.storedValues()["k"] == expected)
    }

    struct TypedCase: Sendable, CustomTestStringConvertible {
        let type: String
        let text: String
        let expected: PreferenceValue
        init(_ type: String, _ text: String, _ expected: PreferenceValue) {
            (self.type, self.text, self.expected) = (type, text, expected)
        }
        var testDescription: String { "--type \(type) \(text)" }
    }

    @Test(arguments: [
        TypedCase("bool", "true", .bool(true)),
        TypedCase("int", "42", .int(42)),
        TypedCase("double", "42", .double(42)),
        // The file spells non-finite numbers as strings ("Storable values" in
        // Sources/Preferences/Preferences.docc/TypedKeys.md).
        TypedCase("double", "Infinity", .string("Infinity")),
        TypedCase("string", "true", .string("true")),
        TypedCase("string", "42", .string("42")),
        TypedCase("json", #"{"a":[1,null]}"#, ["a": [1, .null]]),
        TypedCase("json", "null", .null),
        TypedCase("date", "2026-03-01T09:30:00Z", .string("2026-03-01T09:30:00Z")),
        TypedCase("date", "2026-03-01T10:30:00.5+01:00", .string("2026-03-01T09:30:00.5Z")),
        TypedCase("date", "2026-03-01", .string("2026-03-01T00:00:00Z")),
        TypedCase("data", "aGVsbG8=", .string("aGVsbG8=")),
    ])
    func typeOptionWins(typed: TypedCase) async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(["set", "k", typed.text, "--type", typed.type])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(try await workspace.storedValues()["k"] == typed.expected)
    }

    @Test func typedDatesReadBackThroughATypedKey() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "last_sync", "2026-03-01T09:30:00.25Z", "--type", "date")
        let store = try await PreferencesStore(fileURL: workspace.store)
        let key = PreferenceKey<Date>("last_sync", default: .distantPast)
        #expect(try store.value(for: key) == Date(timeIntervalSince1970: 1_772_357_400.25))
    }

    @Test func theParserCanBeCalledWithoutTheBinary() async throws {
        let directory = try TemporaryDirectory()
        let collected = Collected()
        let tool = PrefsTool(
            environment: ["PREFS_HOME": directory.path],
            output: ToolOutput(
                standardOutput: { collected.append(out: $0) },
                standardError: { collected.append(error: $0) }))
        #expect(await tool.run(["set", "zoom", "15"]) == .success)
        #expect(await tool.run(["--suite", "default", "get", "zoom", "--json"]) == .success)
        #expect(await tool.run(["get", "nothing"]) == .keyNotSet)
        #expect(collected.output == "15\n")
        #expect(collected.errors == "prefs: error: key 'nothing' is not set\n")
    }

    struct ParseCase: Sendable, CustomTestStringConvertible {
        let words: [String]
        let file: String?
        let arguments: [String]
        var testDescription: String { words.joined(separator: " ") }
    }

    @Test(arguments: [
        ParseCase(words: ["--file=/x", "get", "k"], file: "/x", arguments: ["k"]),
        ParseCase(words: ["get", "--file", "/x", "k"], file: "/x", arguments: ["k"]),
        ParseCase(words: ["set", "k", "--", "--type"], file: nil, arguments: ["k", "--type"]),
        ParseCase(words: ["set", "k", "-0.5"], file: nil, arguments: ["k", "-0.5"]),
    ])
    func optionsMayComeAnywhereBeforeTheDoubleDash(parse: ParseCase) throws {
        let parser = CommandLineParser(
            commands: PrefsTool.commands, globalOptions: GlobalOptions.optionSpecs)
        let invocation = try parser.parse(parse.words)
        #expect(invocation.global[GlobalOptions.file] == parse.file)
        #expect(invocation.arguments == parse.arguments)
    }
}

/// Text a ``ToolOutput`` received.
final class Collected: Sendable {
    private let state = Locked<(output: String, errors: String)>(("", ""))
    var output: String { state.withLock { $0.output } }
    var errors: String { state.withLock { $0.errors } }
    func append(out text: String) { state.withLock { $0.output += text } }
    func append(error text: String) { state.withLock { $0.errors += text } }
}
