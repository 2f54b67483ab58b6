import Foundation
import PreferencesTestSupport
import Testing

@testable import PrefsCLI

/// An unknown command or option names the nearest one, as `git` does, and
/// is still a usage error that touches nothing.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLISuggestionTests {
    @Test(arguments: [
        (["sett", "k", "1"], "unknown command 'sett'; did you mean 'set'?"),
        (["lst"], "unknown command 'lst'; did you mean 'list'?"),
        (["expotr"], "unknown command 'expotr'; did you mean 'export'?"),
        (["replica"], "unknown command 'replica'; did you mean 'replicas'?"),
        (["help", "revrt"], "unknown command 'revrt'; did you mean 'revert'?"),
        (["get", "k", "--jsno"], "unknown option '--jsno'; did you mean '--json'?"),
        (["--suit", "app", "get", "k"], "unknown option '--suit'; did you mean '--suite'?"),
        (["revert", "1", "--forced"], "unknown option '--forced'; did you mean '--force'?"),
        (["list", "--defualts"], "unknown option '--defualts'; did you mean '--defaults'?"),
        (["--verison"], "unknown option '--verison'; did you mean '--version'?"),
    ])
    func aNearNameIsSuggested(arguments: [String], message: String) async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(arguments)
        #expect(output.status == 2)
        #expect(output.standardOutput == "")
        #expect(output.standardError == "prefs: error: \(message)\n")
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test(arguments: [
        (["x"], "unknown command 'x'; usage: prefs [--file PATH | --suite NAME]"),
        (["frobnicate"], "unknown command 'frobnicate'; usage: prefs [--file PATH"),
        (["get", "k", "--zzz"], "unknown option '--zzz'; usage: prefs get KEY"),
        // --json is another command's option: get's are --json and --long.
        (["path", "--json"], "unknown option '--json'; usage: prefs path"),
    ])
    func nothingCloseKeepsTheUsage(arguments: [String], message: String) async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(arguments)
        #expect(output.status == 2)
        #expect(
            output.standardError.hasPrefix("prefs: error: \(message)"), "\(output.standardError)")
        #expect(!output.standardError.contains("did you mean"))
    }

    @Test(arguments: [
        ("sett", ["set"]),
        ("gte", ["get"]),
        ("st", ["set"]),
        ("x", []),
        ("dif", ["diff"]),
        ("restor", ["restore"]),
        ("stet", ["set"]),
        ("wtach", ["watch"]),
        ("imprt", ["import"]),
        ("completion", ["completions"]),
        ("status", []),
        ("deleet", ["delete"]),
    ])
    func nearestCommandNames(typed: String, expected: [String]) {
        #expect(
            NearestName.suggestions(for: typed, among: PrefsTool.commands.map { $0.name })
                == expected)
    }

    @Test func equallyNearNamesAreAllSuggested() {
        let candidates = ["--json", "--jsax", "--long"]
        #expect(NearestName.suggestions(for: "--jsan", among: candidates) == ["--json", "--jsax"])
        #expect(
            NearestName.hint(for: "--jsan", among: candidates)
                == "; did you mean '--json' or '--jsax'?")
        #expect(NearestName.distance(Array("ab"), Array("ba")) == 1)
        #expect(NearestName.distance(Array("kitten"), Array("sitting")) == 3)
    }
}
