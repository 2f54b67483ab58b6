import Foundation
import PreferencesTestSupport
import Testing

/// `prefs completions --list suites|keys`, which the scripts run when Tab
/// is pressed: names one per line, and never an error on the user's line.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLICompletionListTests {
    let workspace: CompletionWorkspace

    init() throws {
        workspace = try CompletionWorkspace()
    }

    @Test func suitesAreTheStoresInTheStoreDirectoryOnly() async throws {
        try await workspace.makeStores()
        let output = try await workspace.prefs("completions", "--list", "suites")
        #expect(output.status == 0)
        #expect(output.standardError == "")
        #expect(output.standardOutput == "app\nother\n")
    }

    @Test func suitesFollowXDGConfigHomeWithoutPrefsHome() async throws {
        let config = workspace.directory.file("config")
        let extra = ["PREFS_HOME": "", "XDG_CONFIG_HOME": config.path]
        try await workspace.prefs("--suite", "mail", "set", "k", "1", extra: extra)
        #expect(
            FileManager.default.fileExists(
                atPath: config.appendingPathComponent("prefs/mail.json").path))
        let output = try await workspace.prefs("completions", "--list", "suites", extra: extra)
        #expect(output.standardOutput == "mail\n")
    }

    @Test func keysAreTheManifestsAndTheStoredOnesSorted() async throws {
        try await workspace.makeStores()
        let output = try await workspace.prefs("--suite", "app", "completions", "--list", "keys")
        #expect(output.status == 0)
        #expect(output.standardError == "")
        #expect(output.standardOutput == "build\ndark_mode\nlanguage\nmap_zoom\n")
        // $PREFS_MANIFEST applies as it does for every command.
        let manifest = workspace.directory.file("keys.json")
        try write(#"{ "format" : 1, "keys" : { "retries" : { "type" : "int" } } }"#, to: manifest)
        let other = try await workspace.prefs(
            "completions", "--list", "keys", "--suite", "other",
            extra: ["PREFS_MANIFEST": manifest.path])
        #expect(other.standardOutput == "retries\nzoom\n")
    }

    @Test(arguments: [
        ["--file", "corrupt.json"],
        ["--suite", "../outside"],
        ["--suite", "app", "--manifest", "unreadable.json"],
        ["--file", "corrupt.json", "--suite", "app"],
        ["--key", "/prefs/app"],
    ])
    func keysOfAStoreThatCannotBeReadAreNothingAndStatusZero(options: [String]) async throws {
        try await workspace.makeStores()
        let directory = workspace.directory
        try write("{ not json", to: directory.file("corrupt.json"))
        try write("{ \"format\" : 1, \"keys\" : ", to: directory.file("unreadable.json"))
        let resolved = options.map { $0.hasSuffix(".json") ? directory.file($0).path : $0 }
        let output = try await runChild(
            "prefs", resolved + ["completions", "--list", "keys"],
            environment: workspace.environment)
        #expect(output.status == 0)
        #expect(output.standardOutput == "")
        #expect(output.standardError == "")
    }

    @Test func nothingIsCreatedWhileListing() async throws {
        let output = try await workspace.prefs("--suite", "new", "completions", "--list", "keys")
        #expect(output.status == 0)
        #expect(output.standardOutput == "")
        let left = try FileManager.default.contentsOfDirectory(
            atPath: workspace.directory.file("stores").path)
        #expect(left == [])
    }
}
