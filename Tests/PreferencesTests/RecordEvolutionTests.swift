import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Version 1 of an app's settings.
private struct SettingsV1: PreferencesRecord {
    var darkMode = false
    var language = "en"
    var legacyMode = false

    enum CodingKeys: String, CodingKey {
        case darkMode = "dark_mode"
        case language
        case legacyMode = "legacy_mode"
    }
}

/// Version 2: `legacyMode` removed, `fontSize` added.
private struct SettingsV2: PreferencesRecord {
    var darkMode = false
    var language = "en"
    var fontSize = 12

    enum CodingKeys: String, CodingKey {
        case darkMode = "dark_mode"
        case language
        case fontSize = "font_size"
    }
}

private struct Frame: Codable, Sendable, Equatable {
    var width = 800
    var height = 600
    var title: String? = nil
    var insets = Insets()
}

private struct Insets: Codable, Sendable, Equatable {
    var top = 1
    var bottom = 2
}

private struct LayoutSettings: PreferencesRecord {
    var darkMode = false
    var language = "en"
    var window = Frame()
    var theme = Theme.light
    var shortcuts: [String: String] = ["save": "cmd-s"]
    var recent: [Frame] = []

    enum CodingKeys: String, CodingKey {
        case darkMode = "dark_mode"
        case language, window, theme, shortcuts, recent
    }
}

@Suite(.scaledTimeLimit(minutes: 10)) struct RecordEvolutionTests {
    @Test func version2ReadsVersion1sFileAndKeepsTheRemovedField() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")

        let v1 = try await RecordStore<SettingsV1>(fileURL: url)
        try await v1.update { settings in
            settings.darkMode = true
            settings.legacyMode = true
        }
        #expect(try storedValues(url) == ["dark_mode": true, "legacy_mode": true])

        let v2 = try await PreferencesStore(fileURL: url).record(SettingsV2.self)
        #expect(v2.value == SettingsV2(darkMode: true, language: "en", fontSize: 12))

        let updated = try await v2.update { $0.fontSize = 14 }
        #expect(updated == SettingsV2(darkMode: true, language: "en", fontSize: 14))
        #expect(try storedValues(url) == ["dark_mode": true, "legacy_mode": true, "font_size": 14])

        // And back: version 1 reads its field and keeps version 2's.
        try await v1.update { $0.language = "fr" }
        #expect(v1.value == SettingsV1(darkMode: true, language: "fr", legacyMode: true))
        #expect(
            try storedValues(url) == [
                "dark_mode": true, "legacy_mode": true, "font_size": 14, "language": "fr",
            ])
    }

    @Test func aFreshProcessReadsVersion1sFileWithVersion2sDefaults() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        try write(
            #"{"format": 1, "values": {"dark_mode": true, "legacy_mode": true, "extra": [1, 2]}}"#,
            to: url)
        let v2 = try await RecordStore<SettingsV2>(fileURL: url)
        #expect(v2.value == SettingsV2(darkMode: true, language: "en", fontSize: 12))
        try await v2.update { $0.darkMode = false }
        #expect(
            try storedValues(url) == ["dark_mode": false, "legacy_mode": true, "extra": [1, 2]])
    }

    @Test func aNestedStructMissingAnInnerFieldTakesTheInitValue() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        try write(
            #"{"format": 1, "values": {"window": {"width": 1024, "insets": {"top": 9}}}}"#, to: url)
        let settings = try await RecordStore<LayoutSettings>(fileURL: url)
        #expect(
            settings.value.window
                == Frame(width: 1024, height: 600, title: nil, insets: Insets(top: 9, bottom: 2)))
        #expect(settings.problems == [])
        // Reading never writes.
        #expect(try storedValues(url) == ["window": ["width": 1024, "insets": ["top": 9]]])
    }

    @Test func aStoredDictionaryKeepsExactlyItsEntries() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        try write(#"{"format": 1, "values": {"shortcuts": {"open": "cmd-o"}}}"#, to: url)
        let settings = try await RecordStore<LayoutSettings>(fileURL: url)
        #expect(settings.value.shortcuts == ["open": "cmd-o"])
    }

    @Test func aFieldOfTheWrongTypeReadsItsDefaultAndNamesItsCodingPath() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        let text = """
            {"format": 1, "values": {"dark_mode": "yes", "language": "fr", "theme": "blue",
             "window": {"width": "wide", "height": 300},
             "recent": [{"width": 1, "height": 2, "insets": {"top": 0, "bottom": 0}},
                        {"width": 3, "height": null, "insets": {"top": 0, "bottom": 0}}]}}
            """
        try write(text, to: url)
        let settings = try await RecordStore<LayoutSettings>(fileURL: url)
        let value = settings.value
        #expect(value.darkMode == false)
        #expect(value.language == "fr")
        #expect(value.theme == .light)
        #expect(value.window == Frame(width: 800, height: 300))
        // An array has no default per element: the whole field reads its default.
        #expect(value.recent == [])
        let problems = settings.problems
        #expect(problems.map(\.key) == ["dark_mode", "recent[1].height", "theme", "window.width"])
        #expect(
            problems.first?.message
                == #"key 'dark_mode' holds a string "yes", which is not Bool; reading its default"#)
        #expect(problems.last?.message.contains(#"'window.width' holds a string "wide""#) == true)
        #expect(
            problems[1].message
                == "key 'recent[1].height' holds null, which is not Int; reading its default")

        // An update of another field leaves the bad values stored (nothing is lost)…
        try await settings.update { $0.language = "de" }
        let stored = try storedValues(url)
        #expect(stored["dark_mode"] == "yes")
        #expect(stored["window"] == ["width": "wide", "height": 300])
        #expect(stored["recent"].map { "\($0)" }?.contains("null") == true)
        #expect(stored["language"] == "de")
        // …and one that sets the field replaces it, which ends its problem.
        try await settings.update { $0.darkMode = true }
        #expect(try storedValues(url)["dark_mode"] == true)
        #expect(settings.value.darkMode)
        #expect(!settings.problems.contains { $0.key == "dark_mode" })
        #expect(settings.problems.contains { $0.key == "window.width" })
    }

    @Test func aTypedKeyAndARecordFieldWithTheSameNameShareOneValue() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try await PreferencesStore(fileURL: url)
        let settings = store.record(LayoutSettings.self)

        try await store.set(.darkMode, true)
        #expect(settings.value.darkMode)
        try await settings.update { $0.language = "fr" }
        #expect(store[.language] == "fr")
        try await store.remove(.darkMode)
        #expect(settings.value.darkMode == false)
        #expect(try storedValues(url) == ["language": "fr"])
    }
}
