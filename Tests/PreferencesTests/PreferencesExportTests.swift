import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `snapshot.exported(as:)` / `export(as:)`: the library's writers that
/// `prefs export` prints.
@Suite(.scaledTimeLimit(minutes: 2))
struct PreferencesExportTests {
    static let values: [String: PreferenceValue] = [
        "plain": "fr",
        "spaced key": " leading and trailing ",
        "a=b:c#d!e": "x=y:z#!\\",
        "lines": "one\ntwo\r\tthree",
        "unicode": "é 汉 😀",
        "flag": true,
        "count": 42,
        "zoom": 14.5,
        "list": ["a", 1, .null],
        "nested": ["k": ["x": false], "n": .null],
        "nothing": .null,
        "empty": [:],
    ]

    @Test func jsonReadsBackAsTheSameValuesAndImportsIntoAStore() async throws {
        let directory = try TemporaryDirectory()
        let text = try PreferencesSnapshot(values: Self.values).exported(as: .json)
        #expect(text.hasSuffix("}\n"))
        let url = directory.file("backup.json")
        try write(text, to: url)
        let read = try LegacyReader.read(.json, at: url).values
        #expect(read == Self.values)

        // Back into a store: the same values.
        let store = try await PreferencesStore(fileURL: directory.file("other.json"))
        try await store.apply(read)
        #expect(try fileSnapshot(directory.file("other.json")).values == Self.values)
    }

    @Test func jsonIsTheStoreFilesLayout() throws {
        let text = try PreferencesSnapshot(values: ["b": [1, ["c": "d"]], "a": [], "e\u{301}": 1])
            .exported(as: .json)
        #expect(
            text == """
                {
                  "a" : [],
                  "b" : [
                    1,
                    {
                      "c" : "d"
                    }
                  ],
                  "e\u{301}" : 1
                }

                """)
        #expect(try PreferencesSnapshot().exported(as: .json) == "{}\n")
    }

    @Test func propertiesReadBackAsStrings() throws {
        let directory = try TemporaryDirectory()
        let export = try PreferencesSnapshot(values: Self.values).export(as: .properties)
        #expect(export.format == .properties)
        #expect(export.omitted == [] && export.warnings == [])
        #expect(export.text.utf8.allSatisfy { $0 < 0x80 })
        let url = directory.file("out.properties")
        try write(export.text, to: url)
        let read = try LegacyReader.read(.properties, at: url).values
        #expect(
            read
                == Self.values.mapValues { value in
                    if case .string = value { return value }
                    return .string(value.jsonText)
                })
    }

    @Test func plistLeavesNullsOutAndSaysWhich() throws {
        let directory = try TemporaryDirectory()
        let export = try PreferencesSnapshot(values: Self.values).export(as: .plist)
        #expect(export.omitted == ["list[2]", "nested.n", "nothing"])
        #expect(
            export.warnings == [
                "'list[2]' is null, which a property list cannot hold; left out",
                "'nested.n' is null, which a property list cannot hold; left out",
                "'nothing' is null, which a property list cannot hold; left out",
            ])
        let url = directory.file("out.plist")
        try write(export.text, to: url)
        var expected = Self.values
        expected["list"] = ["a", 1]
        expected["nested"] = ["k": ["x": false]]
        expected["nothing"] = nil
        #expect(try LegacyReader.read(.plist, at: url).values == expected)
        #expect(try PreferencesSnapshot(values: Self.values).exported(as: .plist) == export.text)
    }

    @Test func plistRefusesCharactersXMLCannotCarry() {
        #expect(
            throws: PreferencesError.invalidValue(
                key: "bell",
                reason: "holds control character U+7, which an XML property list cannot carry")
        ) {
            try PreferencesSnapshot(values: ["bell": "ring\u{07}"]).exported(as: .plist)
        }
        // JSON and properties carry it.
        #expect(throws: Never.self) {
            try PreferencesSnapshot(values: ["bell": "ring\u{07}"]).exported(as: .json)
        }
    }
}
