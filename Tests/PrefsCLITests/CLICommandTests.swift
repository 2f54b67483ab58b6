import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Every command, run as the built `prefs` binary.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLICommandTests {
    @Test func setThenGetPrintsStringsRawAndOtherValuesAsJSON() async throws {
        let workspace = try CLIWorkspace()
        #expect(try await workspace.prefs("set", "language", "fr").status == 0)
        #expect(try await workspace.prefs("set", "map_zoom", "14.5").status == 0)
        #expect(
            try await workspace.prefs("set", "servers", #"["a","b"]"#, "--type", "json").status == 0
        )

        let language = try await workspace.prefs("get", "language")
        #expect(language.status == 0)
        #expect(language.standardOutput == "fr\n")
        #expect(language.standardError == "")
        #expect(try await workspace.prefs("get", "language", "--json").line == #""fr""#)
        #expect(try await workspace.prefs("get", "map_zoom").line == "14.5")
        #expect(try await workspace.prefs("get", "servers").line == #"["a","b"]"#)
    }

    @Test func getOfAKeyThatIsNotSetExitsOneWithAnErrorLine() async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs("get", "missing")
        #expect(output.status == 1)
        #expect(output.standardOutput == "")
        #expect(output.standardError == "prefs: error: key 'missing' is not set\n")
    }

    @Test func deleteRemovesAKeyAndExitsOneWhenItIsNotSet() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        try await workspace.prefs("set", "b", "2")
        #expect(try await workspace.prefs("delete", "a").status == 0)
        #expect(try await workspace.storedValues() == ["b": 2])
        let again = try await workspace.prefs("delete", "a")
        #expect(again.status == 1)
        #expect(again.standardError == "prefs: error: key 'a' is not set\n")
    }

    @Test func listPrintsSortedKeyEqualsJSONLinesOrOneObject() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "zeta", "last")
        try await workspace.prefs("set", "alpha", "true")
        try await workspace.prefs("set", "mid", "3")
        let lines = try await workspace.prefs("list")
        #expect(lines.status == 0)
        #expect(lines.standardOutput == "alpha = true\nmid = 3\nzeta = \"last\"\n")
        let json = try await workspace.prefs("list", "--json")
        #expect(json.status == 0)
        let parsed = try TestJSON.parse(json.standardOutput)
        #expect(parsed == ["alpha": true, "mid": 3, "zeta": "last"])
    }

    @Test func listOfAMissingFileIsEmptyAndCreatesNothing() async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs("list")
        #expect(output.status == 0)
        #expect(output.standardOutput == "")
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test func clearRemovesEveryKey() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        try await workspace.prefs("set", "b", "x")
        #expect(try await workspace.prefs("clear").status == 0)
        #expect(try await workspace.storedValues() == [:])
        #expect(try await workspace.prefs("list").standardOutput == "")
    }

    @Test func pathFollowsFileThenSuiteThenEnvironment() async throws {
        let workspace = try CLIWorkspace()
        #expect(try await workspace.prefs("path").line == workspace.store.path)

        let home = workspace.directory.path
        let suite = try await workspace.prefs(
            environment: ["PREFS_HOME": home], ["--suite", "com.example.app", "path"])
        #expect(suite.line == home + "/com.example.app.json")
        let fallback = try await workspace.prefs(environment: ["PREFS_HOME": home], ["path"])
        #expect(fallback.line == home + "/default.json")
        let xdg = try await workspace.prefs(environment: ["XDG_CONFIG_HOME": home], ["path"])
        #expect(xdg.line == home + "/prefs/default.json")
    }

    @Test(arguments: ["../escape", ".hidden", "a/b", ""])
    func invalidSuiteNamesAreUsageErrors(name: String) async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(
            environment: ["PREFS_HOME": workspace.directory.path],
            ["--suite", name, "set", "k", "v"])
        #expect(output.status == 2)
        #expect(output.standardError.hasPrefix("prefs: error: invalid suite name"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path) == [])
    }

    @Test func suiteStoresLiveUnderPrefsHome() async throws {
        let workspace = try CLIWorkspace()
        let environment = ["PREFS_HOME": workspace.directory.path]
        #expect(
            try await workspace.prefs(
                environment: environment, ["--suite", "app", "set", "k", "v"]
            )
            .status == 0)
        #expect(
            try await workspace.prefs(environment: environment, ["--suite", "app", "get", "k"]).line
                == "v")
        #expect(FileManager.default.fileExists(atPath: workspace.file("app.json").path))
    }

    @Test func checkReportsAHealthyFile() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        let output = try await workspace.prefs("check")
        #expect(output.status == 0)
        #expect(output.standardOutput == "\(workspace.store.path): ok, 1 key\n")
    }

    @Test func valuesStartingWithADashNeedDoubleDashUnlessNumbers() async throws {
        let workspace = try CLIWorkspace()
        #expect(try await workspace.prefs("set", "offset", "-5").status == 0)
        #expect(try await workspace.prefs("get", "offset", "--json").line == "-5")
        #expect(try await workspace.prefs("set", "motto", "--", "--never").status == 0)
        #expect(try await workspace.prefs("get", "motto").line == "--never")
        #expect(try await workspace.prefs("set", "motto", "--never").status == 2)
    }
}
