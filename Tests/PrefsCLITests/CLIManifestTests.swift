import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `--manifest`: typing `set`, defaults in `get`, validation in `set`,
/// `import` and `check` (7.2 and 7.5 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIManifestTests {
    static let manifestText = """
        {
          "format" : 1,
          "keys" : {
            "dark_mode" : { "default" : false, "type" : "bool" },
            "language" : { "default" : "en", "enum" : ["de", "en", "fr"], "type" : "string" },
            "build" : { "type" : "string" },
            "map_zoom" : { "default" : 14, "maximum" : 20, "minimum" : 1, "type" : "double" },
            "retries" : { "type" : "int" }
          }
        }
        """

    let workspace: CLIWorkspace
    let manifest: URL

    init() throws {
        workspace = try CLIWorkspace()
        manifest = workspace.file("keys.json")
        try write(Self.manifestText, to: manifest)
    }

    func prefs(_ arguments: String...) async throws -> ProcessOutput {
        try await workspace.prefs(["--manifest", manifest.path] + arguments)
    }

    @Test func theDeclaredTypeReplacesInference() async throws {
        #expect(try await prefs("set", "build", "42").status == 0)
        #expect(try await prefs("set", "map_zoom", "15").status == 0)
        #expect(try await prefs("set", "undeclared", "15").status == 0)
        #expect(try await prefs("set", "dark_mode", "yes").status == 0)
        #expect(
            try await workspace.storedValues() == [
                "build": "42", "map_zoom": .double(15), "undeclared": 15, "dark_mode": true,
            ])
        // Without the manifest the same text is inferred for a new key.
        #expect(try await workspace.prefs("set", "other_build", "42").status == 0)
        #expect(try await workspace.storedValues()["other_build"] == 42)
    }

    @Test(arguments: [
        (["set", "map_zoom", "25"], "invalid value for key 'map_zoom': '25' must be at most 20"),
        (["set", "map_zoom", "high"], "invalid value for key 'map_zoom'"),
        (["set", "language", "es"], "invalid value for key 'language': 'es' must be one of"),
        (["set", "retries", "1.5"], "invalid value for key 'retries'"),
        (["set", "map_zoom", "hello", "--type", "string"], "key 'map_zoom' must be"),
    ])
    func valuesThatDoNotFitExitThreeAndWriteNothing(arguments: [String], message: String)
        async throws
    {
        try await workspace.prefs("set", "keep", "1")
        let before = try #require(contents(workspace.store))
        let output = try await workspace.prefs(["--manifest", manifest.path] + arguments)
        #expect(output.status == 3)
        #expect(output.standardError.hasPrefix("prefs: error: \(message)"))
        #expect(contents(workspace.store) == before)
    }

    @Test func getPrintsTheManifestDefaultForAnUnsetKey() async throws {
        #expect(try await prefs("get", "map_zoom").line == "14")
        #expect(try await prefs("get", "language").line == "en")
        #expect(try await prefs("get", "retries").status == 1)
        #expect(try await workspace.prefs("get", "map_zoom").status == 1)
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test func checkReportsEveryStoredValueThatDoesNotFit() async throws {
        try await workspace.prefs("set", "map_zoom", "30")
        try await workspace.prefs("set", "language", "es")
        try await workspace.prefs("set", "dark_mode", "maybe")
        try await workspace.prefs("set", "other", "anything")
        let output = try await prefs("check")
        #expect(output.status == 3)
        let lines = output.standardError.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("prefs: error: key '") })
        #expect(lines[0].hasPrefix("prefs: error: key 'dark_mode' must be"))
        #expect(lines[1].hasPrefix("prefs: error: key 'language' must be one of"))
        #expect(lines[2] == "prefs: error: key 'map_zoom' must be at most 20, not 30")
        #expect(try await workspace.prefs("check").status == 0)
    }

    @Test func importTypesStringsOfDeclaredKeys() async throws {
        let legacy = workspace.file("app.properties")
        try write("dark_mode=true\nmap_zoom=12\nbuild=7\nother=3\n", to: legacy)
        let output = try await prefs("import", legacy.path, "--format", "properties")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(
            try await workspace.storedValues() == [
                "dark_mode": true, "map_zoom": .double(12), "build": "7", "other": "3",
            ])
    }

    @Test func importOfAValueThatDoesNotFitImportsNothing() async throws {
        let legacy = workspace.file("app.properties")
        try write("dark_mode=true\nmap_zoom=99\n", to: legacy)
        let output = try await prefs("import", legacy.path, "--format", "properties")
        #expect(output.status == 3)
        #expect(
            output.standardError.hasPrefix(
                "prefs: error: \(legacy.path): key 'map_zoom' must be at most 20"))
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test func aBrokenManifestIsReportedBeforeAnythingIsWritten() async throws {
        try write("{\"format\":1,\"keys\":", to: manifest)
        let output = try await prefs("set", "a", "1")
        #expect(output.status == 4)
        #expect(output.standardError.hasPrefix("prefs: error: \(manifest.path)"))
        let missing = try await workspace.prefs([
            "--manifest", workspace.file("nope.json").path, "list",
        ])
        #expect(missing.status == 5)
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }
}
