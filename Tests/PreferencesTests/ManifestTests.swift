import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

enum Speed: String, Codable, Sendable, CaseIterable { case slow, fast }

private struct ManifestSettings: PreferencesRecord {
    var darkMode = false
    var volume = 7
    var zoom = 1.5
    var name = "main"
    var nickname: String? = nil
    var window = Window(width: 10, height: 20)

    enum CodingKeys: String, CodingKey {
        case darkMode = "dark_mode"
        case volume, zoom, name, nickname, window
    }
}

@Suite(.scaledTimeLimit(minutes: 10)) struct ManifestTests {
    static let speed = PreferenceKey<Speed>("speed", default: .slow, help: "How fast to go.")
    static let optionalSpeed = PreferenceKey<Speed?>("optional_speed", default: nil)
    static let described = PreferenceKey<Bool>(
        "described", default: true, help: "A described flag.")

    static var schemasURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Schemas")
    }

    static func schemaProblems(_ text: String) throws -> [String] {
        let schemaURL = schemasURL.appendingPathComponent("key-manifest.schema.json")
        let schema = try JSONText.parse(
            Array(try Data(contentsOf: schemaURL)), source: schemaURL.path)
        let value = try PreferenceValue(jsonText: text)
        return SchemaTests.validate(value, against: schema, root: schema)
    }

    /// A manifest in a file of the test's directory.
    static func manifest(_ text: String, in directory: TemporaryDirectory) throws
        -> PreferencesManifest
    {
        let url = directory.file("keys.json")
        try write(text, to: url)
        return try PreferencesManifest.load(from: url)
    }

    @Test func keysDeclareTheirTypeDefaultAndHelp() throws {
        let manifest = try PreferencesManifest(keys: [
            PreferenceKeys.darkMode, PreferenceKeys.counter, PreferenceKeys.bigCounter,
            PreferenceKeys.ratio, PreferenceKeys.mapZoom, PreferenceKeys.lastSync,
            PreferenceKeys.when,
            PreferenceKeys.blob, PreferenceKeys.homepage, PreferenceKeys.tags, PreferenceKeys.theme,
            PreferenceKeys.level, PreferenceKeys.window, PreferenceKeys.nickname, Self.described,
        ])
        let types = manifest.entries.mapValues(\.type)
        #expect(
            types == [
                "dark_mode": .bool, "counter": .int, "big": .int, "ratio": .double,
                "map_zoom": .double,
                "last_sync": .date, "when": .date, "blob": .data, "homepage": .string,
                "tags": .json,
                "theme": .string, "level": .int, "window": .json, "nickname": .string,
                "described": .bool,
            ])
        #expect(manifest["dark_mode"]?.defaultValue == false)
        #expect(manifest["map_zoom"]?.defaultValue == 14.0)
        #expect(manifest["when"]?.defaultValue == "1970-01-01T00:00:00Z")
        #expect(manifest["window"]?.defaultValue == ["width": 800, "height": 600])
        #expect(manifest["last_sync"]?.defaultValue == nil)
        #expect(manifest["nickname"]?.defaultValue == nil)
        #expect(manifest["described"]?.help == "A described flag.")
        #expect(manifest["dark_mode"]?.help == nil)
    }

    @Test func caseIterableEnumsDeclareTheirCases() throws {
        let manifest = try PreferencesManifest(keys: [Self.speed, Self.optionalSpeed])
        #expect(
            manifest["speed"]
                == .init(
                    type: .string, defaultValue: "slow", help: "How fast to go.",
                    allowedValues: ["slow", "fast"]))
        #expect(
            manifest["optional_speed"] == .init(type: .string, allowedValues: ["slow", "fast"]))
        #expect(
            manifest.validate(key: "speed", value: "medium")?.message
                == #"key 'speed' must be one of "slow", "fast", not "medium""#)
    }

    @Test func aRecordDeclaresItsFieldsWithInitValues() throws {
        let manifest = try PreferencesManifest(record: ManifestSettings.self)
        #expect(
            manifest.entries == [
                "dark_mode": .init(type: .bool, defaultValue: false),
                "volume": .init(type: .int, defaultValue: 7),
                "zoom": .init(type: .double, defaultValue: 1.5),
                "name": .init(type: .string, defaultValue: "main"),
                "window": .init(type: .json, defaultValue: ["width": 10, "height": 20]),
            ])
    }

    @Test func aWrittenManifestReadsBackEqualAndMatchesTheSchema() throws {
        let directory = try TemporaryDirectory()
        var manifest = try PreferencesManifest(keys: [
            PreferenceKeys.darkMode, PreferenceKeys.mapZoom, PreferenceKeys.window, Self.speed,
            PreferenceKeys.lastSync,
        ])
        manifest["map_zoom"]?.minimum = 1
        manifest["map_zoom"]?.maximum = 20.5
        let url = directory.file("keys.json")
        try manifest.write(to: url)
        let text = try #require(contents(url))
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains(#""maximum" : 20.5"#) && text.contains(#""minimum" : 1,"#))
        #expect(try PreferencesManifest.load(from: url) == manifest)
        #expect(try Self.schemaProblems(text) == [])
    }

    @Test func theExampleManifestLoadsAndMatchesTheSchema() throws {
        let url = Self.schemasURL.appendingPathComponent("examples/key-manifest.json")
        let manifest = try PreferencesManifest.load(from: url)
        #expect(
            manifest["map_zoom"]
                == .init(
                    type: .double, defaultValue: 14, help: "Map zoom level.", minimum: 1,
                    maximum: 20))
        #expect(manifest["language"]?.allowedValues == ["de", "en", "fr"])
        #expect(manifest["last_sync"]?.type == .date)
        #expect(try Self.schemaProblems(try #require(contents(url))) == [])
    }

    static let example = try! PreferencesManifest.load(
        from: schemasURL.appendingPathComponent("examples/key-manifest.json"))

    static let validations: [(String, PreferenceValue, String?)] = [
        ("dark_mode", true, nil),
        ("dark_mode", "yes", #"key 'dark_mode' must be a bool, not a string "yes""#),
        ("map_zoom", 3, nil),
        ("map_zoom", 20.0, nil),
        ("map_zoom", 20.5, "key 'map_zoom' must be at most 20, not 20.5"),
        ("map_zoom", 0, "key 'map_zoom' must be at least 1, not 0"),
        ("map_zoom", "NaN", #"key 'map_zoom' must be at least 1, not "NaN""#),
        ("max_connections", 8.0, nil),
        ("max_connections", 8.5, "key 'max_connections' must be an int, not a number 8.5"),
        ("max_connections", 257, "key 'max_connections' must be at most 256, not 257"),
        ("language", "fr", nil),
        ("language", "es", #"key 'language' must be one of "de", "en", "fr", not "es""#),
        ("last_sync", "2026-01-31T09:30:00Z", nil),
        ("last_sync", "yesterday", #"key 'last_sync' must be a date, not a string "yesterday""#),
        ("window", ["width": 1], nil),
        ("undeclared", ["anything": .null], nil),
    ]

    @Test(arguments: validations)
    func validateChecksTypeRangeAndEnum(key: String, value: PreferenceValue, message: String?) {
        #expect(Self.example.validate(key: key, value: value)?.message == message)
        #expect(Self.example.validate(key: key, value: value)?.key == message.map { _ in key })
    }

    static let parsedTexts: [(String, String, PreferenceValue)] = [
        ("dark_mode", "true", true),
        ("dark_mode", "NO", false),
        ("map_zoom", "15", 15.0),
        ("map_zoom", "1.5e1", 15.0),
        ("max_connections", "256", 256),
        ("language", "de", "de"),
        ("last_sync", "2026-01-31T10:30:00+01:00", "2026-01-31T09:30:00Z"),
        ("window", #"{"width": 3}"#, ["width": 3]),
        ("undeclared_flag", "false", false),
        ("undeclared_count", "12", 12),
        ("undeclared_ratio", "0.25", 0.25),
        ("undeclared_text", "0x10", "0x10"),
        ("undeclared_text", "hello world", "hello world"),
        ("undeclared_big", "99999999999999999999", "99999999999999999999"),
    ]

    @Test(arguments: parsedTexts)
    func parseTypesCommandLineText(key: String, text: String, expected: PreferenceValue) throws {
        #expect(try Self.example.parse(text, forKey: key) == expected)
    }

    @Test(arguments: [
        (
            "dark_mode", "maybe",
            "invalid value for key 'dark_mode': 'maybe' is not a bool (true, yes, on or 1; false, no, off or 0)"
        ),
        (
            "max_connections", "1.5",
            "invalid value for key 'max_connections': '1.5' is not an integer"
        ),
        ("max_connections", "0", "invalid value for key 'max_connections': '0' must be at least 1"),
        ("map_zoom", "0x10", "invalid value for key 'map_zoom': '0x10' is not a number"),
        ("map_zoom", "inf", "invalid value for key 'map_zoom': 'inf' is not a number"),
        (
            "language", "es",
            #"invalid value for key 'language': 'es' must be one of "de", "en", "fr""#
        ),
        (
            "last_sync", "2026-13-01",
            "invalid value for key 'last_sync': '2026-13-01' is not an ISO 8601 date (2026-01-31T09:30:00Z)"
        ),
        ("window", "{width: 3}", "invalid value for key 'window': '{width: 3}' is not JSON"),
    ])
    func parseRejectsTextThatDoesNotFit(key: String, text: String, message: String) {
        #expect {
            try Self.example.parse(text, forKey: key)
        } throws: { error in
            guard let error = error as? PreferencesError, case .invalidValue(key, _) = error else {
                return false
            }
            return error.description.hasPrefix(message)
        }
    }

    /// The message for a text that is no bool lists the spellings, and each
    /// one it lists is taken, with the value its group names.
    @Test func aBoolsMessageListsTheSpellingsItAccepts() throws {
        var message = ""
        do {
            _ = try PreferenceValueType.bool.parse("maybe", forKey: "k")
        } catch let error as PreferencesError {
            message = error.description
        }
        let listed = try #require(
            message.firstRange(of: "(").map { message[$0.upperBound...].dropLast() },
            "no spellings in \"\(message)\"")
        let groups = listed.split(separator: ";").map {
            $0.split(whereSeparator: { $0 == "," || $0 == " " }).filter { $0 != "or" }
        }
        #expect(groups.map(\.count) == [4, 4], "\(message)")
        for (group, expected) in zip(groups, [true, false]) {
            for spelling in group {
                for text in [String(spelling), spelling.uppercased(), " \(spelling) "] {
                    #expect(
                        try PreferenceValueType.bool.parse(text, forKey: "k") == .bool(expected),
                        "'\(text)' from \"\(message)\"")
                }
            }
        }
        for text in ["y", "n", "2", "t", "enabled"] {
            #expect(throws: PreferencesError.self) {
                try PreferenceValueType.bool.parse(text, forKey: "k")
            }
        }
    }

    @Test(arguments: PreferenceValueType.allCases)
    func everyTypeParsesWhatItAccepts(type: PreferenceValueType) throws {
        let samples: [PreferenceValueType: String] = [
            .bool: "true", .int: "-42", .double: "Infinity", .string: "", .json: "[1, null]",
            .date: "2026-01-31T09:30:00.5Z", .data: "AAEC",
        ]
        let value = try type.parse(try #require(samples[type]), forKey: "k")
        #expect(type.accepts(value))
    }

    @Test(arguments: [
        (#"[]"#, "a key manifest is a JSON object"),
        (#"{"format": 2, "keys": {}}"#, "unknown manifest format 2"),
        (#"{"key": {}}"#, "unknown field 'key'"),
        (
            #"{"keys": {"zoom": {"type": "float"}}}"#,
            "key 'zoom': unknown type 'float' (use bool, int, double, string, json, date, data)"
        ),
        (#"{"keys": {"zoom": {"default": 1}}}"#, "key 'zoom': missing 'type'"),
        (
            #"{"keys": {"zoom": {"type": "double", "maximun": 3}}}"#,
            "key 'zoom': unknown field 'maximun'"
        ),
        (
            #"{"keys": {"zoom": {"type": "double", "minimum": 3, "maximum": 2}}}"#,
            "key 'zoom': 'minimum' is greater than 'maximum'"
        ),
        (
            #"{"keys": {"zoom": {"type": "string", "minimum": 3}}}"#,
            "key 'zoom': 'minimum' applies only to int and double keys"
        ),
        (
            #"{"keys": {"zoom": {"type": "int", "default": "x"}}}"#,
            #"key 'zoom': 'default' must be an int, not a string "x""#
        ),
        (
            #"{"keys": {"zoom": {"type": "int", "default": 30, "maximum": 20}}}"#,
            "key 'zoom': 'default' must be at most 20, not 30"
        ),
        (
            #"{"keys": {"zoom": {"type": "int", "enum": []}}}"#,
            "key 'zoom': 'enum' must be a non-empty array"
        ),
        (
            #"{"keys": {"zoom": {"type": "int", "enum": [1, "2"]}}}"#,
            #"key 'zoom': 'enum' value "2" is not an int"#
        ),
        (#"{"keys": {"zoom": {"type": "int"},}}"#, "line 1"),
    ])
    func aBadManifestNamesTheFileAndTheEntry(text: String, reason: String) throws {
        let directory = try TemporaryDirectory()
        #expect {
            try Self.manifest(text, in: directory)
        } throws: { error in
            guard let error = error as? PreferencesError, case .invalidManifest(let file, _) = error
            else { return false }
            return file == directory.file("keys.json").path && error.description.contains(reason)
        }
    }

    @Test func aMissingManifestIsAnIOErrorNamingThePath() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("absent.json")
        #expect {
            try PreferencesManifest.load(from: url)
        } throws: { error in
            guard case .io(_, let path, _, _)? = error as? PreferencesError else { return false }
            return path == url.path
        }
    }

    @Test func problemsListStoredValuesThatDoNotFit() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.edit { prefs in
            prefs[raw: "map_zoom"] = 40
            prefs[raw: "dark_mode"] = true
            prefs[raw: "language"] = "xx"
            prefs[raw: "unknown"] = "anything"
        }
        let problems = Self.example.problems(in: store.snapshot)
        #expect(problems.map(\.key) == ["language", "map_zoom"])
        #expect(
            problems.map(\.message) == [
                #"key 'language' must be one of "de", "en", "fr", not "xx""#,
                "key 'map_zoom' must be at most 20, not 40",
            ])
    }

    @Test func mergingLetsTheSecondManifestWin() throws {
        let fromRecord = try PreferencesManifest(record: ManifestSettings.self)
        let fromKeys = try PreferencesManifest(keys: [Self.described, PreferenceKeys.darkMode])
        let merged = fromRecord.merging(fromKeys)
        #expect(merged.entries.count == 6)
        #expect(merged["described"]?.help == "A described flag.")
        #expect(merged["volume"]?.defaultValue == 7)
    }
}
