import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyPropertiesTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let expected: [String: String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "equals separator", input: "a=b\n", expected: ["a": "b"]),
        Case(name: "colon separator", input: "a:b\n", expected: ["a": "b"]),
        Case(name: "space separator", input: "a b\n", expected: ["a": "b"]),
        Case(name: "tab separator", input: "a\tb\n", expected: ["a": "b"]),
        Case(name: "form feed separator", input: "a\u{0C}b", expected: ["a": "b"]),
        Case(name: "white space around the separator", input: "a \t = \t b", expected: ["a": "b"]),
        Case(name: "only one separator is skipped", input: "a = = b", expected: ["a": "= b"]),
        Case(name: "space then colon", input: "key4 ::value4", expected: ["key4": ":value4"]),
        Case(name: "trailing white space kept", input: "a=b  \t", expected: ["a": "b  \t"]),
        Case(
            name: "leading white space of the line skipped", input: "   a=b", expected: ["a": "b"]),
        Case(name: "key without separator", input: "lonely\n", expected: ["lonely": ""]),
        Case(name: "key with separator and nothing after", input: "a=\n", expected: ["a": ""]),
        Case(name: "empty key", input: "=value\n", expected: ["": "value"]),
        Case(
            name: "blank line is not a key", input: "a=1\n   \n\t\n\nb=2",
            expected: ["a": "1", "b": "2"]),
        Case(name: "hash comment", input: "# comment\na=1", expected: ["a": "1"]),
        Case(name: "bang comment", input: "! comment\na=1", expected: ["a": "1"]),
        Case(name: "indented comment", input: "   # comment = x\na=1", expected: ["a": "1"]),
        Case(name: "comment does not continue", input: "# comment \\\na=1", expected: ["a": "1"]),
        Case(
            name: "hash inside a value", input: "a=b # not a comment",
            expected: ["a": "b # not a comment"]),
        Case(name: "continuation", input: "a=one \\\n    two", expected: ["a": "one two"]),
        Case(
            name: "continuation skips tabs and form feeds", input: "a=x\\\n\t\u{0C} y",
            expected: ["a": "xy"]),
        Case(name: "continuation in the key", input: "ke\\\n  y=v", expected: ["key": "v"]),
        Case(
            name: "continued line starting with hash is data", input: "a=abc\\\n  # def",
            expected: ["a": "abc# def"]),
        Case(
            name: "even backslashes do not continue", input: "a=x\\\\\nb=y",
            expected: ["a": "x\\", "b": "y"]),
        Case(
            name: "three backslashes continue", input: "key2=abc\\\\defg\\\\\\\n  \n",
            expected: ["key2": "abc\\defg\\"]),
        Case(
            name: "continuation onto an empty line", input: "a=x\\\n\nb=y",
            expected: ["a": "x", "b": "y"]),
        Case(name: "continuation at end of file", input: "a=x\\", expected: ["a": "x"]),
        Case(
            name: "continuation with CRLF", input: "a=x\\\r\n  y\r\nb=z",
            expected: ["a": "xy", "b": "z"]),
        Case(name: "CR line ends", input: "a=1\rb=2\r", expected: ["a": "1", "b": "2"]),
        Case(name: "CRLF line ends", input: "a=1\r\nb=2\r\n", expected: ["a": "1", "b": "2"]),
        Case(
            name: "last line without terminator", input: "a=1\nb=2", expected: ["a": "1", "b": "2"]),
        Case(name: "duplicate keys: the last wins", input: "a=1\na=2", expected: ["a": "2"]),
        Case(
            name: "escaped separators in the key", input: "a\\=b\\:c\\ d=v",
            expected: ["a=b:c d": "v"]),
        Case(name: "escapes t n r f", input: "a=\\t\\n\\r\\f", expected: ["a": "\t\n\r\u{0C}"]),
        Case(
            name: "other escapes are the character", input: "a=\\b\\q\\0\\\\\\\"",
            expected: ["a": "bq0\\\""]),
        Case(name: "unicode escape", input: "a=\\u0041\\u00e9\\u00E9", expected: ["a": "Aéé"]),
        Case(name: "unicode escape in key", input: "\\u6c49=x", expected: ["汉": "x"]),
        Case(
            name: "surrogate pair from two escapes", input: "a=\\ud83d\\ude00", expected: ["a": "😀"]
        ),
        Case(
            name: "lone surrogate becomes U+FFFD", input: "a=\\ud83dx", expected: ["a": "\u{FFFD}x"]
        ),
        Case(name: "escaped leading space in value", input: "a=\\  b", expected: ["a": "  b"]),
        Case(
            name: "raw UTF-8", input: "tästkey=Not mäny välues",
            expected: ["tästkey": "Not mäny välues"]),
        Case(
            name: "byte order mark is part of the key", input: "\u{FEFF}a=1",
            expected: ["\u{FEFF}a": "1"]),
        Case(
            name: "comment after only a continued backslash (JDK 9+)", input: "\\\n  #x=1\nb=2",
            expected: ["b": "2"]),
        Case(name: "only comments", input: "# a\n! b\n", expected: [:]),
        Case(name: "empty file", input: "", expected: [:]),
    ]

    @Test(arguments: cases) func parsesLikeJDK17(_ testCase: Case) throws {
        let values = try PropertiesParser.parse(
            Array(testCase.input.utf8), encoding: .utf8, file: "test.properties")
        #expect(values == testCase.expected.mapValues { .string($0) })
    }

    @Test func iso8859_1MapsEachByteToOneCharacter() throws {
        let bytes: [UInt8] = Array("k=".utf8) + [0xE4, 0xFF, 0xC3, 0xA4]
        let values = try PropertiesParser.parse(bytes, encoding: .iso8859_1, file: "f")
        #expect(values == ["k": .string("äÿÃ¤")])
    }

    @Test func iso8859_1StillDecodesUnicodeEscapes() throws {
        let values = try PropertiesParser.parse(
            Array("k=\\u4e2d".utf8), encoding: .iso8859_1, file: "f")
        #expect(values == ["k": "中"])
    }

    struct ErrorCase: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let line: Int
        let column: Int
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(name: "too few hex digits", input: "a=\\u12", line: 1, column: 3),
        ErrorCase(name: "non-hex digit", input: "a=b\nc=x\\u12g4", line: 2, column: 4),
        ErrorCase(name: "double u", input: "a=\\uu0041", line: 1, column: 3),
        ErrorCase(name: "in a key", input: "\n\n  k\\uZZZZ=1", line: 3, column: 4),
        ErrorCase(name: "on a continuation line", input: "a=x\\\n   \\u00", line: 2, column: 4),
        ErrorCase(name: "after CRLF lines", input: "a=1\r\nb=2\r\nc=\\u", line: 3, column: 3),
    ]

    @Test(arguments: errorCases) func malformedUnicodeEscapeIsAnError(_ testCase: ErrorCase) {
        #expect {
            try PropertiesParser.parse(Array(testCase.input.utf8), encoding: .utf8, file: "p")
        } throws: { error in
            guard
                case .legacyFormat(let file, let line, let column, let reason) = error
                    as? PreferencesError
            else { return false }
            return file == "p" && line == testCase.line && column == testCase.column
                && reason.contains("\\u")
        }
    }

    @Test(
        arguments: [
            ([0x61, 0x3D, 0xFF], 2),
            ([0x61, 0x0A, 0x62, 0x3D, 0xC3], 4),
            ([0xC0, 0x80], 0),  // overlong
            ([0x61, 0xED, 0xA0, 0x80], 1),  // surrogate
            ([0xF4, 0x90, 0x80, 0x80], 0),  // beyond U+10FFFF
        ] as [([UInt8], Int)])
    func invalidUTF8NamesTheByteOffset(_ bytes: [UInt8], offset: Int) {
        #expect {
            try PropertiesParser.parse(bytes, encoding: .utf8, file: "p")
        } throws: { error in
            guard case .legacyFormat(_, _, _, let reason) = error as? PreferencesError else {
                return false
            }
            return reason == "invalid UTF-8 at byte offset \(offset)"
        }
    }

    @Test func tenThousandLinesParse() throws {
        var text = ""
        for index in 0..<10_000 { text += "key.\(index) = value \(index)\n" }
        let values = try PropertiesParser.parse(Array(text.utf8), encoding: .utf8, file: "big")
        #expect(values.count == 10_000)
        #expect(values["key.9999"] == "value 9999")
    }
}
