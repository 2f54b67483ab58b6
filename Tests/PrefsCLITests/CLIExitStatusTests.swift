import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Exit statuses and error lines (7.3 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md), and that a
/// failing command leaves the store file exactly as it was.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIExitStatusTests {
    struct Failure: CustomTestStringConvertible, Sendable {
        let arguments: [String]
        let status: Int32
        let message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let failures: [Failure] = [
        Failure(arguments: ["get", "missing"], status: 1, message: "key 'missing' is not set"),
        Failure(arguments: ["delete", "missing"], status: 1, message: "key 'missing' is not set"),
        Failure(arguments: ["frobnicate"], status: 2, message: "unknown command 'frobnicate'"),
        Failure(arguments: ["list", "--colour"], status: 2, message: "unknown option '--colour'"),
        Failure(arguments: ["set", "k"], status: 2, message: "missing KEY VALUE"),
        Failure(arguments: ["get", "a", "b"], status: 2, message: "unexpected argument 'b'"),
        Failure(
            arguments: ["set", "k", "v", "--type"], status: 2,
            message: "option '--type' needs a value"),
        Failure(
            arguments: ["set", "k", "v", "--type", "float"], status: 2,
            message: "unknown type 'float'"),
        Failure(
            arguments: ["list", "--json=yes"], status: 2, message: "option '--json' takes no value"),
        Failure(
            arguments: ["list", "--manifest"], status: 2,
            message: "option '--manifest' needs a value"),
        Failure(
            arguments: ["export", "--format", "yaml"], status: 2,
            message: "unknown export format 'yaml'"),
        Failure(arguments: [], status: 2, message: "missing command"),
        Failure(
            arguments: ["set", "k", "maybe", "--type", "bool"], status: 3,
            message: "invalid value for key 'k': 'maybe' is not a bool"),
        Failure(
            arguments: ["set", "k", "1.5", "--type", "int"], status: 3,
            message: "invalid value for key 'k': '1.5' is not an integer"),
        Failure(
            arguments: ["set", "k", "99999999999999999999", "--type", "int"], status: 3,
            message: "invalid value for key 'k'"),
        Failure(
            arguments: ["set", "k", "ten", "--type", "double"], status: 3,
            message: "invalid value for key 'k': 'ten' is not a number"),
        Failure(
            arguments: ["set", "k", "{\"a\":", "--type", "json"], status: 3,
            message: "invalid value for key 'k': '{\"a\":' is not JSON"),
        Failure(
            arguments: ["set", "k", "yesterday", "--type", "date"], status: 3,
            message: "invalid value for key 'k': 'yesterday' is not an ISO 8601 date"),
        Failure(
            arguments: ["set", "k", "%%%", "--type", "data"], status: 3,
            message: "invalid value for key 'k': '%%%' is not base64"),
        Failure(arguments: ["set", "", "v"], status: 3, message: "invalid key"),
        Failure(arguments: ["set", "bad\u{1}key", "v"], status: 3, message: "invalid key"),
    ]

    @Test(arguments: failures)
    func failingCommandsExitWithTheirStatusAndLeaveTheStoreAlone(failure: Failure) async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "keep", "me")
        let before = try #require(contents(workspace.store))
        let stamp = try identity(workspace.store)

        let output = try await workspace.prefs(failure.arguments)
        #expect(output.status == failure.status)
        #expect(output.standardOutput == "")
        #expect(output.standardError.hasPrefix("prefs: error: " + failure.message))
        // One line.
        #expect(output.standardError.filter { $0 == "\n" }.count == 1)
        #expect(contents(workspace.store) == before)
        #expect(try identity(workspace.store) == stamp)
    }

    @Test func usageErrorsNameTheCommandsUsageOnTheSameLine() async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs("get", "--bogus")
        #expect(output.status == 2)
        #expect(
            output.standardError
                == "prefs: error: unknown option '--bogus'; usage: prefs get KEY [--json] [--long] (see 'prefs get --help')\n"
        )
    }

    @Test(arguments: [
        ["get", "a"], ["set", "a", "2"], ["delete", "a"], ["list"], ["clear"], ["export"],
        ["check"], ["watch"],
    ])
    func aCorruptStoreExitsFourAndIsNotTouched(arguments: [String]) async throws {
        let workspace = try CLIWorkspace()
        try write("{\"format\":1,\"values\":{\"a\":1", to: workspace.store)
        let output = try await workspace.prefs(arguments)
        #expect(output.status == 4)
        #expect(
            output.standardError.hasPrefix(
                "prefs: error: \(workspace.store.path) is not a valid preferences file"))
        #expect(contents(workspace.store) == "{\"format\":1,\"values\":{\"a\":1")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
        #expect(siblings.allSatisfy { !$0.contains("corrupt") })
    }

    @Test(arguments: [["get", "a"], ["set", "a", "1"], ["list"]])
    func aDirectoryWhereTheFileShouldBeIsAnIOError(arguments: [String]) async throws {
        let workspace = try CLIWorkspace()
        try FileManager.default.createDirectory(
            at: workspace.store, withIntermediateDirectories: false)
        let output = try await workspace.prefs(arguments)
        #expect(output.status == 5)
        #expect(output.standardError.hasPrefix("prefs: error: cannot "))
        #expect(output.standardError.contains(workspace.store.path))
    }
}

extension CLIExitStatusTests.Failure: CustomStringConvertible {
    var description: String { testDescription }
}
