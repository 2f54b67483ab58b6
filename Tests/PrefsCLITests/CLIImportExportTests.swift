import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs import` of every legacy format and `prefs export` back out.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIImportExportTests {
    struct Source: Sendable, CustomTestStringConvertible {
        let format: String
        let name: String
        let files: [String: String]
        let expected: [String: PreferenceValue]
        var testDescription: String { format }
    }

    static let sources: [Source] = [
        Source(
            format: "properties", name: "app.properties",
            files: [
                "app.properties":
                    "# legacy\nlanguage = fr\nserver.port=8080\ngreeting=hello\\u0020world\n"
            ],
            expected: ["language": "fr", "server.port": "8080", "greeting": "hello world"]),
        Source(
            format: "shared-prefs", name: "prefs.xml",
            files: [
                "prefs.xml": """
                <?xml version='1.0' encoding='utf-8' standalone='yes' ?>
                <map>
                    <string name="language">fr</string>
                    <boolean name="dark_mode" value="true" />
                    <int name="launches" value="3" />
                </map>
                """
            ],
            expected: ["language": "fr", "dark_mode": true, "launches": 3]),
        Source(
            format: "plist", name: "prefs.plist",
            files: [
                "prefs.plist": """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict>
                <key>language</key><string>fr</string>
                <key>zoom</key><real>14.5</real>
                <key>tags</key><array><string>a</string></array>
                </dict></plist>
                """
            ],
            expected: ["language": "fr", "zoom": 14.5, "tags": ["a"]]),
        Source(
            format: "envdir", name: "env",
            files: ["env/LANGUAGE": "fr\n", "env/PORT": "8080"],
            expected: ["LANGUAGE": "fr", "PORT": "8080"]),
        Source(
            format: "json", name: "old.json",
            files: ["old.json": #"{"language":"fr","limits":{"max":3}}"#],
            expected: ["language": "fr", "limits": ["max": 3]]),
    ]

    static func place(_ source: Source, in workspace: CLIWorkspace) throws -> URL {
        for (name, text) in source.files {
            let url = workspace.file(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try write(text, to: url)
        }
        return workspace.file(source.name)
    }

    @Test(arguments: sources)
    func importReadsEachFormat(source: Source) async throws {
        let workspace = try CLIWorkspace()
        let url = try Self.place(source, in: workspace)
        let output = try await workspace.prefs("import", url.path, "--format", source.format)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(
            output.standardOutput == "imported \(source.expected.count) keys from \(url.path)\n")
        #expect(try await workspace.storedValues() == source.expected)
    }

    @Test func importKeepsStoredKeysUnlessOverwriteIsGiven() async throws {
        let workspace = try CLIWorkspace()
        let url = workspace.file("app.properties")
        try write("language=fr\ntheme=dark\n", to: url)
        try await workspace.prefs("set", "language", "de")

        let kept = try await workspace.prefs("import", url.path, "--format", "properties")
        #expect(kept.status == 0)
        #expect(
            kept.standardOutput
                == "imported 1 key from \(url.path); kept 1 already stored (use --overwrite to replace them)\n"
        )
        #expect(try await workspace.storedValues() == ["language": "de", "theme": "dark"])

        let replaced = try await workspace.prefs(
            "import", url.path, "--format", "properties", "--overwrite")
        #expect(replaced.status == 0)
        #expect(try await workspace.storedValues() == ["language": "fr", "theme": "dark"])
        // The history names the import and its file.
        let history = try await PreferencesStore(fileURL: workspace.store).history()
        #expect(history.entries.last?.cause == "import properties \(url.path)")
    }

    @Test func prefixSelectsTheKeysThatStartWithIt() async throws {
        let workspace = try CLIWorkspace()
        let url = workspace.file("app.properties")
        try write("sync.interval=30\nsync.enabled=true\nui.theme=dark\n", to: url)
        let output = try await workspace.prefs(
            "import", url.path, "--format", "properties", "--prefix", "sync.")
        #expect(output.status == 0)
        #expect(
            try await workspace.storedValues() == ["sync.interval": "30", "sync.enabled": "true"])
    }

    @Test func latin1PropertiesNeedTheEncodingOption() async throws {
        let workspace = try CLIWorkspace()
        let url = workspace.file("latin1.properties")
        try Data([0x63, 0x61, 0x66, 0xE9, 0x3D, 0x6F, 0xF9, 0x0A]).write(to: url)  // café=où
        let utf8 = try await workspace.prefs("import", url.path, "--format", "properties")
        #expect(utf8.status == 4)
        #expect(utf8.standardError.hasPrefix("prefs: error: \(url.path):1"))
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))

        let latin1 = try await workspace.prefs(
            "import", url.path, "--format", "properties", "--encoding", "iso-8859-1")
        #expect(latin1.status == 0, "\(latin1.standardError)")
        #expect(try await workspace.storedValues() == ["café": "où"])
    }

    @Test(arguments: [
        ("json", #"{"a": 1,"#),
        ("properties", "a=\\uZZZZ\n"),
        ("shared-prefs", "<map><int name=\"a\" value=\"x\" /></map>"),
        ("plist", "<plist><array/></plist>"),
    ])
    func aMalformedLegacyFileImportsNothingAndExitsFour(format: String, text: String) async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "keep", "me")
        let before = try #require(contents(workspace.store))
        let url = workspace.file("legacy")
        try write(text, to: url)
        let output = try await workspace.prefs("import", url.path, "--format", format)
        #expect(output.status == 4)
        #expect(output.standardError.hasPrefix("prefs: error: \(url.path)"))
        #expect(output.standardError.filter { $0 == "\n" }.count == 1)
        #expect(contents(workspace.store) == before)
        #expect(contents(url) == text)
    }

    @Test(arguments: [
        (["--format", "yaml"], "unknown import format 'yaml'"),
        ([], "missing --format"),
        (
            ["--format", "json", "--encoding", "iso-8859-1"],
            "--encoding applies to --format properties only"
        ),
        (["--format", "properties", "--encoding", "utf-16"], "unknown encoding 'utf-16'"),
    ])
    func importUsageErrors(options: [String], message: String) async throws {
        let workspace = try CLIWorkspace()
        let url = workspace.file("x.json")
        try write("{}", to: url)
        let output = try await workspace.prefs(["import", url.path] + options)
        #expect(output.status == 2)
        #expect(output.standardError.hasPrefix("prefs: error: \(message)"))
    }

    @Test func importOfAMissingFileIsAnIOError() async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(
            "import", workspace.file("nope.properties").path, "--format", "properties")
        #expect(output.status == 5)
        #expect(output.standardError.contains("nope.properties"))
    }

    static let awkward: [String: PreferenceValue] = [
        "plain": "fr",
        "spaced key": " leading and trailing ",
        "a=b:c#d!e": "x=y:z#!\\",
        "lines": "one\ntwo\r\tthree\u{0C}",
        "unicode": "é 汉 😀",
        "flag": true,
        "count": 42,
        "zoom": 14.5,
        "list": ["a", 1],
        "nested": ["k": ["x": false]],
    ]

    @Test func propertiesExportReadsBackAsTheSameStrings() async throws {
        let workspace = try CLIWorkspace()
        try await PreferencesStore(fileURL: workspace.store).edit { prefs in
            for (key, value) in Self.awkward { prefs[raw: key] = value }
        }
        let output = try await workspace.prefs("export", "--format", "properties")
        #expect(output.status == 0)
        #expect(output.standardOutput.utf8.allSatisfy { $0 < 0x80 })
        for encoding in [PropertiesEncoding.utf8, .iso8859_1] {
            let url = workspace.file("out.properties")
            try write(output.standardOutput, to: url)
            let read = try LegacyReader.read(.properties, at: url, encoding: encoding)
            let expected = Self.awkward.mapValues { value -> PreferenceValue in
                if case .string = value { return value }
                return .string(value.jsonText)
            }
            #expect(read.values == expected)
        }
    }

    /// `prefs export` orders keys as the store file does, by their UTF-8
    /// bytes: "e" with a combining accent (bytes 65 CC 81) comes before "f"
    /// (66), although `String`'s `<` compares it as "é" and puts it after.
    @Test func jsonExportOrdersKeysByTheirBytesAsTheFileDoes() async throws {
        let workspace = try CLIWorkspace()
        let accented = "e\u{301}"
        try await PreferencesStore(fileURL: workspace.store).edit { prefs in
            prefs[raw: "f"] = 1
            prefs[raw: accented] = 2
            prefs[raw: "nested"] = .object(["f": 3, accented: 4])
        }
        let output = try await workspace.prefs("export")
        #expect(output.status == 0, "prefs export: \(output.standardError)")
        func keyOrder(_ text: String) -> [String] {
            text.split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.drop(while: { $0 == " " })
                guard trimmed.unicodeScalars.first == "\"",
                    let end = trimmed.dropFirst().firstIndex(of: "\"")
                else { return nil }
                return String(trimmed[trimmed.index(after: trimmed.startIndex)..<end])
            }
        }
        let exported = keyOrder(output.standardOutput).map { Array($0.unicodeScalars) }
        let expected = [accented, "f", "nested", accented, "f"].map { Array($0.unicodeScalars) }
        #expect(exported == expected, "export printed: \(output.standardOutput)")
        let file = try String(contentsOf: workspace.store, encoding: .utf8)
        let fileKeys = keyOrder(file)
        let values = try #require(fileKeys.firstIndex(of: "values"), "no values in: \(file)")
        let fileValues = fileKeys[(values + 1)...].prefix(5).map { Array($0.unicodeScalars) }
        #expect(fileValues == expected, "the store file holds: \(file)")
        // `prefs list` prints its keys in the same order.
        let list = try await workspace.prefs("list")
        let listed = list.standardOutput.split(separator: "\n").map {
            Array(($0.split(separator: " = ", maxSplits: 1).first ?? "").unicodeScalars)
        }
        #expect(
            listed == expected.prefix(3).map { $0 }, "prefs list printed: \(list.standardOutput)")
    }

    @Test func plistExportReadsBackAsTheSameValues() async throws {
        let workspace = try CLIWorkspace()
        var values = Self.awkward
        // XML cannot carry a form feed; see the next test.
        values["lines"] = "one\ntwo\r\tthree"
        values["nothing"] = .null
        try await PreferencesStore(fileURL: workspace.store).edit { [values] prefs in
            for (key, value) in values { prefs[raw: key] = value }
        }
        let output = try await workspace.prefs("export", "--format", "plist")
        #expect(output.status == 0)
        #expect(
            output.standardError
                == "prefs: warning: 'nothing' is null, which a property list cannot hold; left out\n"
        )
        let url = workspace.file("out.plist")
        try write(output.standardOutput, to: url)
        values["nothing"] = nil
        #expect(try LegacyReader.read(.plist, at: url).values == values)
    }

    @Test func plistExportRefusesCharactersXMLCannotCarry() async throws {
        let workspace = try CLIWorkspace()
        try await PreferencesStore(fileURL: workspace.store).edit { $0[raw: "bell"] = "ring\u{07}" }
        let output = try await workspace.prefs("export", "--format", "plist")
        #expect(output.status == 3)
        #expect(output.standardOutput == "")
        #expect(
            output.standardError
                == "prefs: error: key 'bell' holds control character U+7, which an XML property list cannot carry\n"
        )
    }

    @Test func jsonExportImportsIntoAnotherStore() async throws {
        let workspace = try CLIWorkspace()
        try await PreferencesStore(fileURL: workspace.store).edit { prefs in
            for (key, value) in Self.awkward { prefs[raw: key] = value }
        }
        let output = try await workspace.prefs("export")
        #expect(output.status == 0)
        let url = workspace.file("backup.json")
        try write(output.standardOutput, to: url)
        let other = workspace.file("other.json")
        let imported = try await runChild(
            "prefs", ["--file", other.path, "import", url.path, "--format", "json"])
        #expect(imported.status == 0)
        #expect(try await PreferencesStore(fileURL: other).snapshot.values == Self.awkward)
    }
}
