import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyPropertyListTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let body: String
        let expected: PreferenceValue
        var testDescription: String { name }
    }

    static func xml(_ body: String) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>v</key>
            \t\(body)
            </dict>
            </plist>

            """.utf8)
    }

    static let cases: [Case] = [
        Case(name: "integer", body: "<integer>728</integer>", expected: 728),
        Case(
            name: "negative integer", body: "<integer>-80000000000</integer>",
            expected: -80_000_000_000),
        Case(name: "integer with plus", body: "<integer>+5</integer>", expected: 5),
        Case(name: "integer with blanks", body: "<integer> 12\n</integer>", expected: 12),
        Case(name: "hex integer", body: "<integer>0x1F</integer>", expected: 31),
        Case(
            name: "largest Int64", body: "<integer>9223372036854775807</integer>",
            expected: .int(.max)),
        Case(
            name: "smallest Int64", body: "<integer>-9223372036854775808</integer>",
            expected: .int(.min)),
        Case(name: "real", body: "<real>32.5</real>", expected: 32.5),
        Case(name: "real with exponent", body: "<real>1e-3</real>", expected: 0.001),
        Case(name: "real integral", body: "<real>3</real>", expected: 3.0),
        Case(name: "true", body: "<true/>", expected: true),
        Case(name: "false", body: "<false/>", expected: false),
        Case(name: "string", body: "<string>Doodah</string>", expected: "Doodah"),
        Case(
            name: "string entities", body: "<string>&lt;hello &amp; 'hi' there!&gt;</string>",
            expected: "<hello & 'hi' there!>"),
        Case(
            name: "string keeps white space", body: "<string>  a\n b  </string>",
            expected: "  a\n b  "),
        Case(name: "empty string", body: "<string/>", expected: ""),
        Case(name: "unicode string", body: "<string>Mässig, Maß</string>", expected: "Mässig, Maß"),
        Case(
            name: "date", body: "<date>2004-10-26T10:33:33Z</date>",
            expected: "2004-10-26T10:33:33Z"),
        Case(
            name: "date before 1970", body: "<date>1969-07-20T20:17:40Z</date>",
            expected: "1969-07-20T20:17:40Z"),
        Case(
            name: "date in a leap year", body: "<date>2024-02-29T23:59:59Z</date>",
            expected: "2024-02-29T23:59:59Z"),
        Case(
            name: "data", body: "<data>PGJpbmFyeSBndW5rPg==</data>",
            expected: "PGJpbmFyeSBndW5rPg=="),
        Case(
            name: "data wrapped with tabs", body: "<data>\n\tPGJpbmFy\n\teSBndW5rPg==\n\t</data>",
            expected: "PGJpbmFyeSBndW5rPg=="),
        Case(name: "empty data", body: "<data></data>", expected: ""),
        Case(
            name: "array",
            body: "<array><string>A</string><integer>12</integer><real>32.5</real></array>",
            expected: ["A", 12, 32.5]),
        Case(name: "empty array", body: "<array/>", expected: []),
        Case(
            name: "nested arrays", body: "<array><array><integer>1</integer></array></array>",
            expected: [[1]]),
        Case(
            name: "dict", body: "<dict><key>a</key><integer>17</integer><key>b</key><true/></dict>",
            expected: ["a": 17, "b": true]),
        Case(name: "empty dict", body: "<dict/>", expected: [:]),
        Case(
            name: "duplicate key: last wins",
            body: "<dict><key>a</key><integer>1</integer><key>a</key><integer>2</integer></dict>",
            expected: ["a": 2]),
        Case(
            name: "unicode key", body: "<dict><key>Åbenraa</key><string>x</string></dict>",
            expected: ["Åbenraa": "x"]),
        Case(
            name: "comments are ignored", body: "<array><!-- c --><integer>1</integer></array>",
            expected: [1]),
        Case(name: "CDATA string", body: "<string><![CDATA[a<b]]></string>", expected: "a<b"),
    ]

    @Test(arguments: cases) func xmlValues(_ testCase: Case) throws {
        let values = try PropertyListParser.parse(Self.xml(testCase.body), file: "p.plist")
        #expect(values == ["v": testCase.expected])
    }

    @Test func rootWithoutPlistElementIsAccepted() throws {
        let values = try PropertyListParser.parse(
            Array("<dict><key>a</key><string>b</string></dict>".utf8), file: "p")
        #expect(values == ["a": "b"])
    }

    /// A Foundation value tree written both ways by PropertyListSerialization.
    static func foundationSample() -> [String: Any] {
        [
            "anInt": 728, "aNegativeInt": -5, "aBigInt": Int64(9_223_372_036_854_775_764),
            "aFloat": 0.5, "aTrue": true, "aFalse": false, "aString": "Doodah",
            "aUnicode": "Mässig, Maß 😀", "aDate": Date(timeIntervalSince1970: 1_098_786_813),
            "someData": Data("<binary gunk>".utf8), "aList": ["A", 12, 32.5, [1, 2, 3]] as [Any],
            "aDict": ["deeper": ["a": 17, "b": 32.5] as [String: Any]] as [String: Any],
            "anEmptyDict": [String: Any](), "anEmptyList": [Any](),
        ]
    }

    static let sampleExpected: [String: PreferenceValue] = [
        "anInt": 728, "aNegativeInt": -5, "aBigInt": 9_223_372_036_854_775_764, "aFloat": 0.5,
        "aTrue": true, "aFalse": false, "aString": "Doodah", "aUnicode": "Mässig, Maß 😀",
        "aDate": "2004-10-26T10:33:33Z", "someData": "PGJpbmFyeSBndW5rPg==",
        "aList": ["A", 12, 32.5, [1, 2, 3]], "aDict": ["deeper": ["a": 17, "b": 32.5]],
        "anEmptyDict": [:], "anEmptyList": [],
    ]

    @Test func xmlAndBinaryGiveTheSameValues() throws {
        let sample = Self.foundationSample()
        let xml = try PropertyListSerialization.data(
            fromPropertyList: sample, format: .xml, options: 0)
        let binary = try PropertyListSerialization.data(
            fromPropertyList: sample, format: .binary, options: 0)
        #expect(binary.starts(with: Array("bplist00".utf8)))
        let fromXML = try PropertyListParser.parse(Array(xml), file: "x.plist")
        let fromBinary = try PropertyListParser.parse(Array(binary), file: "b.plist")
        #expect(fromXML == fromBinary)
        #expect(fromBinary == Self.sampleExpected)
    }

    @Test func binaryDatesKeepMicroseconds() throws {
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["d": Date(timeIntervalSinceReferenceDate: -0.25)], format: .binary,
            options: 0)
        #expect(
            try PropertyListParser.parse(Array(binary), file: "b") == [
                "d": "2000-12-31T23:59:59.750000Z"
            ])
    }

    // MARK: - Hand-encoded binary plists

    /// A binary plist of the given objects (already encoded), object 0 the
    /// root, with one-byte offsets and references.
    static func bplist(_ objects: [[UInt8]], top: UInt8 = 0) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
        bytes += [0, 0, 0, 0, 0, 0, 0, top]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        return bytes
    }

    static func ascii(_ text: String) -> [UInt8] {
        [0x50 | UInt8(text.utf8.count)] + Array(text.utf8)
    }

    @Test func handEncodedBinaryMatchesXML() throws {
        // {"k": [1, "é", 2.5, true]} with a UTF-16 string and a 2-byte integer.
        let binary = Self.bplist([
            [0xD1, 1, 2], Self.ascii("k"), [0xA4, 3, 4, 5, 6], [0x11, 0x01, 0x00],
            [0x61, 0x00, 0xE9],
            [0x23] + Array(withUnsafeBytes(of: (2.5).bitPattern.bigEndian) { Array($0) }), [0x09],
        ])
        let fromXML = try PropertyListParser.parse(
            Self.xml(
                "<array><integer>256</integer><string>é</string><real>2.5</real><true/></array>"
            )
            .map { $0 }, file: "x")
        let fromBinary = try PropertyListParser.parse(binary, file: "b")
        #expect(fromBinary == ["k": [256, "é", 2.5, true]])
        #expect(fromXML == ["v": [256, "é", 2.5, true]])
    }

    @Test func uidIsAnErrorNamingTheKeyPath() {
        let binary = Self.bplist([
            [0xD1, 1, 2], Self.ascii("$top"), [0xD1, 3, 4], Self.ascii("root"), [0x80, 0x01],
        ])
        expectError(binary, reason: "'$top.root'")
    }

    @Test func integerBeyondInt64IsAnErrorInBinary() {
        let big: [UInt8] =
            [0x14] + [UInt8](repeating: 0, count: 8) + [0x80, 0, 0, 0, 0, 0, 0, 0x2C]
        // {"list": [2**63 + 44]}, as Apple writes UInt64 values above Int64.max.
        let binary = Self.bplist([[0xD1, 1, 2], Self.ascii("list"), [0xA1, 3], big])
        expectError(binary, reason: "'list[0]'")
    }

    @Test func selfContainingArrayIsAnError() {
        expectError(
            Self.bplist([[0xD1, 1, 2], Self.ascii("a"), [0xA1, 2]]), reason: "contains itself")
    }

    @Test(
        arguments: [
            ("too short", Array("bplist00".utf8)),
            ("bad trailer", Array("bplist00".utf8) + [UInt8](repeating: 0, count: 32)),
            ("reference out of range", bplist([[0xD1, 1, 9], ascii("a")])),
            ("string past the table", bplist([[0xD1, 1, 2], [0x5F, 0x10, 0x7F], [0x09]])),
            ("non-string key", bplist([[0xD1, 1, 1], [0x10, 0x01]])),
        ] as [(String, [UInt8])])
    func malformedBinaryIsAnError(_ name: String, _ bytes: [UInt8]) {
        #expect(throws: PreferencesError.self) { try PropertyListParser.parse(bytes, file: name) }
    }

    func expectError(_ bytes: [UInt8], reason: String) {
        #expect {
            try PropertyListParser.parse(bytes, file: "b.plist")
        } throws: { error in
            guard case .legacyFormat(let file, _, _, let message) = error as? PreferencesError
            else {
                return false
            }
            return file == "b.plist" && message.contains(reason)
        }
    }

    // MARK: - XML errors

    struct ErrorCase: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let line: Int?
        let column: Int?
        let reasonContains: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(
            name: "root is an array", text: "<plist><array/></plist>", line: nil, column: nil,
            reasonContains: "not a dictionary"),
        ErrorCase(
            name: "root is a string", text: "<plist>\n<string>x</string></plist>", line: nil,
            column: nil, reasonContains: "a string"),
        ErrorCase(
            name: "integer beyond Int64",
            text:
                "<plist><dict>\n<key>a</key><dict><key>big</key>\n  <integer>9223372036854775852</integer></dict></dict></plist>",
            line: 3, column: 3, reasonContains: "'a.big'"),
        ErrorCase(
            name: "integer below Int64",
            text: "<dict><key>n</key><integer>-9223372036854775809</integer></dict>", line: 1,
            column: 19, reasonContains: "'n'"),
        ErrorCase(
            name: "bad integer", text: "<dict><key>n</key><integer>12a</integer></dict>", line: 1,
            column: 19, reasonContains: "'12a'"),
        ErrorCase(
            name: "bad real", text: "<dict><key>r</key><real>x</real></dict>", line: 1, column: 19,
            reasonContains: "not a number"),
        ErrorCase(
            name: "bad date", text: "<dict><key>d</key><date>2004-13-01T00:00:00Z</date></dict>",
            line: 1, column: 19, reasonContains: "not a date"),
        ErrorCase(
            name: "bad base64", text: "<dict><key>d</key><data>@@@</data></dict>", line: 1,
            column: 19, reasonContains: "base64"),
        ErrorCase(
            name: "key without value", text: "<dict>\n<key>a</key>\n</dict>", line: 1, column: 1,
            reasonContains: "'a' has no value"),
        ErrorCase(
            name: "value without key", text: "<dict>\n  <string>a</string></dict>", line: 2,
            column: 3, reasonContains: "expected <key>"),
        ErrorCase(
            name: "unknown element", text: "<dict><key>a</key><float>1</float></dict>", line: 1,
            column: 19, reasonContains: "<float>"),
        ErrorCase(
            name: "truncated", text: "<plist><dict><key>a</key>", line: 1, column: 26,
            reasonContains: "not closed"),
        ErrorCase(
            name: "two values in plist", text: "<plist><dict/><dict/></plist>", line: 1, column: 1,
            reasonContains: "not one"),
        ErrorCase(
            name: "text in a dict", text: "<dict>oops<key>a</key><true/></dict>", line: 1,
            column: 1, reasonContains: "unexpected text"),
        ErrorCase(name: "empty file", text: "", line: 1, column: 1, reasonContains: "empty"),
    ]

    @Test(arguments: errorCases) func malformedXMLIsAnError(_ testCase: ErrorCase) {
        #expect {
            try PropertyListParser.parse(Array(testCase.text.utf8), file: "p.plist")
        } throws: { error in
            guard
                case .legacyFormat(let file, let line, let column, let reason) = error
                    as? PreferencesError
            else { return false }
            return file == "p.plist" && line == testCase.line && column == testCase.column
                && reason.contains(testCase.reasonContains)
        }
    }
}
