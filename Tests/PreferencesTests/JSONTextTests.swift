import Testing

@testable import Preferences

@Suite struct JSONTextTests {
    @Test func integersAndDoublesStayApart() throws {
        let value = try PreferenceValue(jsonText: #"{"a": 3, "b": 3.0, "c": 1e2}"#)
        #expect(value == ["a": .int(3), "b": .double(3), "c": .double(100)])
    }

    @Test func integersAtTheEdgesOf64BitsReadExactlyAndBeyondThemAsNumbers() throws {
        let value = try PreferenceValue(
            jsonText:
                #"[9223372036854775807, -9223372036854775808, 9223372036854775808, -9223372036854775809, -0, 0, 42]"#
        )
        #expect(
            value == [
                .int(.max), .int(.min), .double(0x1p63), .double(-0x1p63), .int(0), .int(0),
                .int(42),
            ])
    }

    @Test(arguments: [Int64.min, Int64.min + 1, -1_000, -1, 0, 7, 10, 99, 1_234_567_890, Int64.max])
    func integersAreWrittenInDecimal(number: Int64) {
        #expect(JSONText.encode(.int(number), pretty: false) == String(number))
    }

    @Test func nestedObjectsKeepTheirOwnMembersAndTheLastDuplicateWins() throws {
        let value = try PreferenceValue(
            jsonText: #"{"a": {"x": 1, "y": {"z": [{"q": 2}]}, "x": 3}, "b": {}, "a2": {"k": "é"}}"#
        )
        #expect(
            value == [
                "a": ["x": 3, "y": ["z": [["q": 2]]]], "b": [:], "a2": ["k": "é"],
            ])
    }

    @Test(arguments: [
        [
            "abcdefghij2", "abcdefghij10", "abcdefghij1", "abcdefgh", "B", "a", "",
            "abcdefghijklmnopq",
        ],
        ["zé", "z", "ä", "a", "Z", "日本", "ab"],
    ])
    func membersAreWrittenInTheOrderStringsCompare(keys: [String]) {
        let fields = Dictionary(uniqueKeysWithValues: keys.map { ($0, PreferenceValue.int(1)) })
        #expect(JSONText.sortedByKey(fields).map(\.key) == keys.sorted())
    }

    @Test(arguments: [0, 1, 2, 3, 17, 1_000, 4_099])
    func manyKeysWithSharedPrefixesAreWrittenInOrder(count: Int) {
        var generator = SystemRandomNumberGenerator()
        var fields: [String: PreferenceValue] = [:]
        while fields.count < count {
            let prefix = ["", "setting.", "setting.option.", "setting.option.long.prefix."]
                .randomElement(using: &generator)!
            let tail = String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 36)
            fields[prefix + String(tail.prefix(Int.random(in: 0...12, using: &generator)))] = 1
        }
        #expect(JSONText.sortedByKey(fields).map(\.key) == fields.keys.sorted())
    }

    @Test func invalidUTF8InAStringIsAnError() {
        #expect(throws: PreferencesError.self) {
            _ = try JSONText.parse([0x22, 0x61, 0xC3, 0x28, 0x22], source: "x")
        }
    }

    @Test func prettyOutputIsSortedWithSpacedColons() {
        let text = JSONText.encode(
            ["b": [1, 2], "a": ["x": true], "c": [], "d": [:]], pretty: true)
        #expect(
            text == """
                {
                  "a" : {
                    "x" : true
                  },
                  "b" : [
                    1,
                    2
                  ],
                  "c" : [],
                  "d" : {}
                }
                """)
    }

    @Test func stringsRoundTripWithEscapesAndUnicode() throws {
        let original = PreferenceValue.string("tab\there \"quoted\" \\ é 😀 \u{1}")
        let text = original.jsonText
        #expect(try PreferenceValue(jsonText: text) == original)
        #expect(try PreferenceValue(jsonText: #""\ud83d\ude00""#) == "😀")
    }

    @Test(arguments: [
        ("{", "line 1, column 2"),
        ("{\n  \"a\" : tru\n}", "line 2, column 9"),
        ("[1,]", "line 1, column 4"),
        ("01", "leading zeros"),
        ("\"\\ud800\"", "unpaired surrogate"),
        ("{} x", "after the end"),
    ])
    func syntaxErrorsNameLineAndColumn(text: String, fragment: String) {
        #expect {
            _ = try PreferenceValue(jsonText: text, source: "f.json")
        } throws: { error in
            "\(error)".contains(fragment) && "\(error)".hasPrefix("f.json")
        }
    }

    @Test func depthIsLimitedWhileParsing() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: PreferencesError.self) {
            _ = try JSONText.parse(Array(deep.utf8), source: "x", maxDepth: 64)
        }
        #expect((try? JSONText.parse(Array(deep.utf8), source: "x", maxDepth: 100)) != nil)
    }
}
