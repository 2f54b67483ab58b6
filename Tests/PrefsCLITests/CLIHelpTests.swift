import Foundation
import PreferencesTestSupport
import Testing

/// `prefs --help` and `prefs COMMAND --help`.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIHelpTests {
    static let commands = [
        "get", "set", "delete", "edit", "list", "clear", "import", "export", "diff", "apply",
        "watch", "log", "revert", "restore", "check", "replicas", "path",
    ]

    @Test(arguments: [["--help"], ["-h"]])
    func toolHelpListsEveryCommandWithExamples(arguments: [String]) async throws {
        let output = try await runChild("prefs", arguments)
        #expect(output.status == 0)
        #expect(output.standardError == "")
        let text = output.standardOutput
        #expect(
            text.contains(
                "usage: prefs [--file PATH | --suite NAME] [--manifest FILE] COMMAND [ARGS]\n"
                    + "       prefs --etcd ENDPOINTS [--suite NAME | --key KEY] [--manifest FILE] COMMAND [ARGS]\n"
            ))
        for command in Self.commands {
            #expect(text.contains("\n  \(command) "), "missing \(command)")
        }
        #expect(text.contains("examples:\n  prefs set dark_mode true"))
        #expect(text.contains("--version"))
        #expect(text.contains("exit status: 0 ok, 1 key not set (or diff found differences),"))
    }

    @Test(arguments: commands)
    func eachCommandHasHelpWithUsageOptionsAndExamples(command: String) async throws {
        let output = try await runChild("prefs", [command, "--help"])
        #expect(output.status == 0)
        #expect(output.standardError == "")
        let text = output.standardOutput
        #expect(text.hasPrefix("usage: prefs \(command)"))
        #expect(text.contains("global options:\n  --file PATH"))
        #expect(text.contains("examples:\n  prefs "))
    }

    @Test func commandHelpShowsItsOwnOptions() async throws {
        let output = try await runChild("prefs", ["import", "--help"])
        #expect(
            output.standardOutput.hasPrefix(
                "usage: prefs import PATH [--format FORMAT] [--encoding ENCODING] [--prefix P] [--overwrite]\n"
            ))
        #expect(
            output.standardOutput.contains("--encoding ENCODING  For properties: utf-8 (default)"))
    }

    @Test func helpWinsOverMissingArguments() async throws {
        let output = try await runChild("prefs", ["set", "--help"])
        #expect(output.status == 0)
        let words = output.standardOutput.split(whereSeparator: \.isWhitespace)
        #expect(words.joined(separator: " ").contains("true and false are booleans"))
    }
}
