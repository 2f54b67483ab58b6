import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct JSONTextTests {
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
        // PREFS_RELIABILITY_SEED=<seed> repeats a failing run's keys.
        var generator = SeededGenerator(state: Reliability.seed &+ UInt64(count))
        var fields: [String: PreferenceValue] = [:]
        while fields.count < count {
            let prefix = ["", "setting.", "setting.option.", "setting.option.long.prefix."]
                .randomElement(using: &generator)!
            let tail = String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 36)
            fields[prefix + String(tail.prefix(Int.random(in: 0...12, using: &generator)))] = 1
        }
        #expect(
            JSONText.sortedByKey(fields).map(\.key) == fields.keys.sorted(),
            "seed \(Reliability.seed)")
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

/// Opening a store checks the `modified` member's entries and the `history`
/// member's without building them (``StoreDocument/readText(_:source:maxDepth:)``):
/// every text must be accepted or rejected exactly as the general reader
/// (`JSONText.parse`) does, with the same message at the same line and
/// column, and give the same other members and the same entries.
@Suite(.scaledTimeLimit(minutes: 10)) struct DeferredMemberParsingTests {
    static let document = Array(
        #"""
        {"format": 1, "values": {"a": "x", "b": [1, 2.5e3, true]},
         "modified": {"a": {"at": "2026-01-02T03:04:05Z", "by": "al\u00e9x \"q\"", "program": "p"},
                      "b": {"at": "é", "by": [[{"n": null, "f": false}], -0.5], "program": 12},
                      "c": 7, "a": {"at": "t", "by": "b", "program": "p", "sudo_user": "r"}},
         "history": [{"sequence": 1, "changes": {"a": {"new": [1]}}}, 2.5],
         "zz": {"k": [1]}}
        """#.utf8)

    /// Both parses of `bytes`: the error text, or the value with
    /// `modified` and `history` left out, and their entries' texts.
    static func outcomes(_ bytes: [UInt8], maxDepth: Int) -> (full: String, deferred: String) {
        let full: String
        do {
            let value = try JSONText.parse(bytes, source: "f", maxDepth: maxDepth)
            var entries = ""
            if case .object(var fields) = value {
                if case .object(let records)? = fields["modified"] {
                    entries = JSONText.encode(.object(records), pretty: false)
                    fields["modified"] = .null
                }
                if case .array(let history)? = fields["history"] {
                    entries += " " + JSONText.encode(.array(history), pretty: false)
                    fields["history"] = .null
                }
                full = JSONText.encode(.object(fields), pretty: false) + " " + entries
            } else {
                full = JSONText.encode(value, pretty: false) + " "
            }
        } catch {
            full = "\(error)"
        }
        let deferred: String
        do {
            let text = try StoreDocument.readText(bytes, source: "f", maxDepth: maxDepth)
            var entries = ""
            if let found = text.recordEntries {
                var records: [String: PreferenceValue] = [:]
                for entry in found {
                    records[entry.key(in: bytes)] = try JSONText.parse(
                        Array(bytes[entry.value]), source: "f")
                }
                entries = JSONText.encode(.object(records), pretty: false)
            }
            if let elements = text.historyElements {
                let history = try elements.map { try JSONText.parse(Array(bytes[$0]), source: "f") }
                entries += " " + JSONText.encode(.array(history), pretty: false)
            }
            deferred = JSONText.encode(text.value, pretty: false) + " " + entries
        } catch {
            deferred = "\(error)"
        }
        return (full, deferred)
    }

    @Test func theWholeDocumentReadsTheSame() throws {
        let (full, deferred) = Self.outcomes(Self.document, maxDepth: 64)
        #expect(full == deferred)
        #expect(deferred.contains(#""a":{"at":"t","by":"b","program":"p","sudo_user":"r"}"#))
        #expect(deferred.hasSuffix(#" [{"changes":{"a":{"new":[1]}},"sequence":1},2.5]"#))
    }

    @Test(arguments: [3, 4, 5, 6])
    func depthLimitsFailAtTheSamePlace(maxDepth: Int) {
        let (full, deferred) = Self.outcomes(Self.document, maxDepth: maxDepth)
        #expect(full == deferred)
    }

    @Test func everyTruncationFailsTheSame() {
        for length in 0..<Self.document.count {
            let (full, deferred) = Self.outcomes(Array(Self.document[..<length]), maxDepth: 64)
            #expect(full == deferred, "cut at \(length)")
        }
    }

    @Test(arguments: ["}", "]", "\"", "\\", ":", ",", "x", "\u{01}", "\u{FF}", "9", "{", " "])
    func everyReplacedByteReadsOrFailsTheSame(replacement: String) {
        // A lone 0xFF byte is invalid UTF-8 wherever it lands.
        let byte: UInt8 = replacement == "\u{FF}" ? 0xFF : Array(replacement.utf8)[0]
        for position in Self.document.indices {
            var mutated = Self.document
            mutated[position] = byte
            let (full, deferred) = Self.outcomes(mutated, maxDepth: 64)
            #expect(full == deferred, "\(replacement.debugDescription) at \(position)")
        }
    }

    /// Entries that repeat the bytes of the entry before are only compared
    /// with it; values that merely start alike (a number and a longer one,
    /// a record and a longer record) must still be read in full.
    /// Kept short: every byte of it is replaced in turn.
    static let repeating = Array(
        #"""
        {"modified": {"a": {"at": "t", "b": [1]}, "b": {"at": "t", "b": [1]},
          "c": {"at": "t", "b": [1]}, "d": {"at": "t", "b": [1], "x": 1},
          "e": 12, "f": 123, "g": 12, "h": "s", "i": "s", "j": "st", "k": [1, [2]], "l": [1, [2]],
          "m": [1, [2]], "n": {"at": "t", "b": [1]}}}
        """#.utf8)

    @Test func repeatedEntriesReadTheSame() throws {
        let (full, deferred) = Self.outcomes(Self.repeating, maxDepth: 64)
        #expect(full == deferred)
        #expect(deferred.contains(#""f":123"#))
        let found = try StoreDocument.readText(Self.repeating, source: "f", maxDepth: 64)
            .recordEntries
        let texts = try #require(found).map {
            String(decoding: Self.repeating[$0.value], as: UTF8.self)
        }
        #expect(texts[4...6] == ["12", "123", "12"])
        #expect(texts[9] == "\"st\"")
        for maxDepth in 2...4 {
            let (full, deferred) = Self.outcomes(Self.repeating, maxDepth: maxDepth)
            #expect(full == deferred, "at most \(maxDepth) levels")
        }
    }

    /// One test, not one per byte: this suite's work is all computation,
    /// and parallel cases would hold every test thread at once.
    @Test func everyTruncationOrReplacedByteOfRepeatedEntriesReadsOrFailsTheSame() {
        for length in 0..<Self.repeating.count {
            let (full, deferred) = Self.outcomes(Array(Self.repeating[..<length]), maxDepth: 64)
            #expect(full == deferred, "cut at \(length)")
        }
        // The bytes that move where a value ends or make it invalid.
        for byte in Array("}]\",9".utf8) + [0xFF] {
            for position in Self.repeating.indices {
                var mutated = Self.repeating
                mutated[position] = byte
                let (full, deferred) = Self.outcomes(mutated, maxDepth: 64)
                #expect(full == deferred, "byte \(byte) at \(position)")
            }
        }
    }

    @Test func aLaterMemberThatIsNoObjectOrArrayLeavesNoEntries() throws {
        let text = Array(
            #"""
            {"modified": {"a": {"at": "t", "by": "b", "program": "p"}}, "modified": 3,
             "history": [{"sequence": 1}], "history": {"sequence": 2}}
            """#.utf8)
        let read = try StoreDocument.readText(text, source: "f", maxDepth: 8)
        #expect(read.recordEntries == nil)
        #expect(read.historyElements == nil)
        #expect(read.value == ["modified": 3, "history": ["sequence": 2]])
        #expect(Self.outcomes(text, maxDepth: 8).full == Self.outcomes(text, maxDepth: 8).deferred)
    }
}

/// Strings are scanned eight bytes at a time for their end, an escape or a
/// control character; wherever those fall against the eight-byte words, a
/// string reads as the text it spells, and a bad byte fails at its place.
@Suite(.scaledTimeLimit(minutes: 10)) struct JSONStringScanningTests {
    static let alphabet: [String] = [
        "a", "Z", "0", " ", "/", "~", "\u{7F}", "\"", "\\", "\n", "\t", "\u{01}", "\u{1F}", "é",
        "€", "😀", "e\u{301}",
    ]

    @Test func everyStringReadsAsWrittenAtEveryAlignment() throws {
        var generator = SeededGenerator(state: 0x57A1_6E55)
        for round in 0..<800 {
            let length = round % 40
            let text = (0..<length).map { _ in Self.alphabet.randomElement(using: &generator)! }
                .joined()
            var quoted: [UInt8] = []
            JSONText.writeString(text, into: &quoted)
            // The string as a value and as a key, shifted by 0 to 8 bytes.
            let padding = [UInt8](repeating: 0x20, count: round % 9)
            let document =
                Array("[".utf8) + padding + quoted + Array(", {".utf8) + quoted
                + Array(": 1}]".utf8)
            #expect(
                try JSONText.parse(document, source: "f") == [.string(text), [text: 1]],
                "\(text.debugDescription)")
            // Skipped (the deferred member's entries) as well as parsed.
            let wrapped = Array(#"{"modified": {"a": "#.utf8) + padding + quoted + Array("}}".utf8)
            let found = try StoreDocument.readText(wrapped, source: "f", maxDepth: 8).recordEntries
            #expect(found?.count == 1)
        }
    }

    @Test func aBadByteFailsAtItsPlaceAtEveryAlignment() {
        for length in 0..<18 {
            for position in 0..<max(length, 1) {
                for (bad, reason) in [
                    (UInt8(0x01), "control character"), (0x0A, "control character"),
                    (0xFF, "invalid UTF-8"),
                ] {
                    var body = [UInt8](repeating: UInt8(ascii: "x"), count: max(length, 1))
                    body[position] = bad
                    let text = Array("\"".utf8) + body + Array("\"".utf8)
                    for deferred in [false, true] {
                        let document =
                            deferred
                            ? Array(#"{"modified": {"a": "#.utf8) + text + Array("}}".utf8) : text
                        #expect(
                            throws: PreferencesError.self,
                            "byte \(bad) at \(position) of \(length), deferred \(deferred)"
                        ) {
                            _ = try StoreDocument.readText(document, source: "f", maxDepth: 8)
                        }
                        do {
                            _ = try StoreDocument.readText(document, source: "f", maxDepth: 8)
                        } catch {
                            // The control character's own column; a bad
                            // UTF-8 string is named at its opening quote.
                            let prefix = deferred ? 19 : 0
                            let column =
                                reason == "invalid UTF-8" ? prefix + 1 : prefix + position + 2
                            let line = bad == 0x0A ? 2 : 1
                            let expected =
                                bad == 0x0A ? "line 2, column 1" : "line \(line), column \(column)"
                            #expect("\(error)".contains(reason), "\(error)")
                            if bad != 0x0A {
                                #expect("\(error)".contains(expected), "\(error)")
                            }
                        }
                    }
                }
            }
        }
    }
}
