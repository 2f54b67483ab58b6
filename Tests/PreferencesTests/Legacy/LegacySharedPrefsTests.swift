import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct LegacySharedPrefsTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let body: String
        let expected: [String: PreferenceValue]
        var testDescription: String { name }
    }

    static func document(_ body: String) -> [UInt8] {
        Array(
            "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n\(body)\n</map>\n"
                .utf8)
    }

    static let cases: [Case] = [
        Case(
            name: "boolean true", body: #"<boolean name="b" value="true" />"#, expected: ["b": true]
        ),
        Case(
            name: "boolean ignores case", body: #"<boolean name="b" value="TrUe" />"#,
            expected: ["b": true]),
        Case(
            name: "boolean other text is false", body: #"<boolean name="b" value="yes" />"#,
            expected: ["b": false]),
        Case(
            name: "boolean without value is false", body: #"<boolean name="b" />"#,
            expected: ["b": false]),
        Case(name: "int", body: #"<int name="i" value="42" />"#, expected: ["i": 42]),
        Case(name: "int with plus sign", body: #"<int name="i" value="+7" />"#, expected: ["i": 7]),
        Case(
            name: "int minimum", body: #"<int name="i" value="-2147483648" />"#,
            expected: ["i": -2_147_483_648]),
        Case(
            name: "int with non-ASCII digits", body: #"<int name="i" value="١٢" />"#,
            expected: ["i": 12]),
        Case(
            name: "long beyond 32 bits", body: #"<long name="l" value="1760897559081" />"#,
            expected: ["l": 1_760_897_559_081]),
        Case(
            name: "long minimum", body: #"<long name="l" value="-9223372036854775808" />"#,
            expected: ["l": .int(.min)]),
        Case(
            name: "float keeps its decimal", body: #"<float name="f" value="0.1" />"#,
            expected: ["f": 0.1]),
        Case(
            name: "float with suffix and blanks", body: #"<float name="f" value=" 1.5f " />"#,
            expected: ["f": 1.5]),
        Case(
            name: "float exponent", body: #"<float name="f" value="-2.5E-3" />"#,
            expected: ["f": -0.0025]),
        Case(name: "float hex", body: #"<float name="f" value="0x1.8p1" />"#, expected: ["f": 3.0]),
        Case(
            name: "float leading dot", body: #"<float name="f" value=".5" />"#, expected: ["f": 0.5]
        ),
        Case(
            name: "float overflow is infinity", body: #"<float name="f" value="1e39" />"#,
            expected: ["f": .double(.infinity)]),
        Case(
            name: "double", body: #"<double name="d" value="3.141592653589793" />"#,
            expected: ["d": 3.141592653589793]),
        Case(
            name: "double Infinity", body: #"<double name="d" value="-Infinity" />"#,
            expected: ["d": .double(-.infinity)]),
        Case(
            name: "double with d suffix", body: #"<double name="d" value="1e300d" />"#,
            expected: ["d": 1e300]),
        Case(name: "string", body: #"<string name="s">hello</string>"#, expected: ["s": "hello"]),
        Case(
            name: "string never trimmed", body: "<string name=\"s\">AAAA==\n    </string>",
            expected: ["s": "AAAA==\n    "]),
        Case(
            name: "self-closing string is empty", body: #"<string name="s" />"#, expected: ["s": ""]
        ),
        Case(
            name: "open-close string is empty", body: #"<string name="s"></string>"#,
            expected: ["s": ""]),
        Case(
            name: "entities",
            body: #"<string name="s">&lt;a&gt; &amp; &quot;b&quot; &apos;c&apos;</string>"#,
            expected: ["s": "<a> & \"b\" 'c'"]),
        Case(
            name: "character references",
            body: #"<string name="s">&#65;&#x42;&#x43;&#233;</string>"#, expected: ["s": "ABCé"]),
        Case(
            name: "NUL character reference", body: #"<string name="s">a&#0;b</string>"#,
            expected: ["s": "a\u{0}b"]),
        Case(
            name: "CDATA and comments",
            body: #"<string name="s">a<!-- x --><![CDATA[<b>&amp;]]>c</string>"#,
            expected: ["s": "a<b>&amp;c"]),
        Case(
            name: "CRLF in text becomes LF", body: "<string name=\"s\">a\r\nb\rc</string>",
            expected: ["s": "a\nb\nc"]),
        Case(
            name: "entities in names", body: #"<int name="a&amp;b" value="1" />"#,
            expected: ["a&b": 1]),
        Case(
            name: "raw UTF-8", body: #"<string name="имя">Привет</string>"#,
            expected: ["имя": "Привет"]),
        Case(
            name: "set sorted",
            body: #"<set name="s"><string>b</string><string>a</string><string>b</string></set>"#,
            expected: ["s": ["a", "b"]]),
        Case(name: "empty set", body: #"<set name="s" />"#, expected: ["s": []]),
        Case(name: "null is absent", body: #"<null name="n" />"#, expected: [:]),
        Case(
            name: "null removes an earlier duplicate",
            body: #"<int name="n" value="1" /><null name="n" />"#, expected: [:]),
        Case(
            name: "duplicate: last wins",
            body: #"<int name="a" value="1" /><string name="a">x</string>"#, expected: ["a": "x"]),
        Case(
            name: "nested list",
            body: #"<list name="l"><int value="1" /><string>x</string><null /></list>"#,
            expected: ["l": [1, "x", .null]]),
        Case(
            name: "nested map", body: #"<map name="m"><boolean name="b" value="true" /></map>"#,
            expected: ["m": ["b": true]]),
        Case(
            name: "text between entries ignored", body: #"stray <int name="a" value="1" /> text"#,
            expected: ["a": 1]),
        Case(
            name: "single-quoted attributes", body: "<int name='a' value='5'/>", expected: ["a": 5]),
    ]

    @Test(arguments: cases) func parsesLikeAndroid(_ testCase: Case) throws {
        let values = try SharedPrefsParser.parse(Self.document(testCase.body), file: "p.xml")
        #expect(values == testCase.expected)
    }

    @Test func floatValueIsTheDecimalNotTheFloat() throws {
        let values = try SharedPrefsParser.parse(
            Self.document(#"<float name="f" value="0.1" />"#), file: "f")
        #expect(values["f"] == .double(0.1))
        #expect(values["f"] != .double(Double(Float(0.1))))
    }

    @Test func nanParses() throws {
        let values = try SharedPrefsParser.parse(
            Self.document(#"<double name="d" value="NaN" />"#), file: "f")
        guard case .double(let number)? = values["d"] else {
            Issue.record("not a double")
            return
        }
        #expect(number.isNaN)
    }

    @Test(arguments: [
        "<map />", "<map/>", "<map></map>", "<?xml version='1.0'?>\n<!-- c -->\n<map>\n</map>\n",
    ])
    func emptyMapsAreValid(_ text: String) throws {
        #expect(try SharedPrefsParser.parse(Array(text.utf8), file: "f").isEmpty)
    }

    struct ErrorCase: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let line: Int
        let column: Int
        let reasonContains: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(name: "empty file", text: "", line: 1, column: 1, reasonContains: "empty"),
        ErrorCase(
            name: "only a declaration", text: "<?xml version='1.0'?>\n", line: 2, column: 1,
            reasonContains: "no root"),
        ErrorCase(
            name: "truncated", text: "<map>\n  <int name=\"a\" value=\"1\" />\n", line: 3,
            column: 1, reasonContains: "not closed"),
        ErrorCase(
            name: "truncated inside a tag", text: "<map>\n  <int name=\"a\" val", line: 2,
            column: 3, reasonContains: "end of file"),
        ErrorCase(
            name: "unknown tag", text: "<map>\n  <integer name=\"a\" value=\"1\" />\n</map>",
            line: 2, column: 3, reasonContains: "unknown element <integer>"),
        ErrorCase(
            name: "non-map root", text: "<list>\n</list>", line: 1, column: 1,
            reasonContains: "not <map>"),
        ErrorCase(
            name: "missing name", text: "<map>\n <int value=\"1\" />\n</map>", line: 2, column: 2,
            reasonContains: "no name"),
        ErrorCase(
            name: "int overflow", text: "<map><int name=\"big\" value=\"2147483648\" /></map>",
            line: 1, column: 6, reasonContains: "'big'"),
        ErrorCase(
            name: "long overflow",
            text: "<map>\n<long name=\"l\" value=\"9223372036854775808\" /></map>", line: 2,
            column: 1, reasonContains: "64-bit"),
        ErrorCase(
            name: "int with blanks", text: "<map><int name=\"i\" value=\" 1\" /></map>", line: 1,
            column: 6, reasonContains: "' 1'"),
        ErrorCase(
            name: "int without value", text: "<map><int name=\"i\" /></map>", line: 1, column: 6,
            reasonContains: "no value"),
        ErrorCase(
            name: "bad float", text: "<map><float name=\"f\" value=\"1.2.3\" /></map>", line: 1,
            column: 6, reasonContains: "not a number"),
        ErrorCase(
            name: "hex float without exponent",
            text: "<map><float name=\"f\" value=\"0x1.8\" /></map>", line: 1, column: 6,
            reasonContains: "not a number"),
        ErrorCase(
            name: "unknown entity", text: "<map><string name=\"s\">&nbsp;</string></map>", line: 1,
            column: 23, reasonContains: "&nbsp;"),
        ErrorCase(
            name: "mismatched end tag", text: "<map>\n<string name=\"s\">x</int>\n</map>", line: 2,
            column: 19, reasonContains: "</int>"),
        ErrorCase(
            name: "element inside string", text: "<map><string name=\"s\"><b/></string></map>",
            line: 1, column: 23, reasonContains: "<b>"),
        ErrorCase(
            name: "text inside int", text: "<map><int name=\"i\" value=\"1\"> </int></map>",
            line: 1, column: 6, reasonContains: "text inside <int>"),
        ErrorCase(
            name: "non-string in set", text: "<map><set name=\"s\"><int value=\"1\"/></set></map>",
            line: 1, column: 20, reasonContains: "not <string>"),
        ErrorCase(
            name: "content after root", text: "<map/>\n<map/>", line: 2, column: 1,
            reasonContains: "after the root"),
        ErrorCase(
            name: "invalid UTF-8", text: "<map>\u{FFFF}", line: 1, column: 6,
            reasonContains: "UTF-8"),
        ErrorCase(
            name: "uppercase X in a character reference",
            text: "<map><string name=\"s\">&#X41;</string></map>", line: 1, column: 23,
            reasonContains: "&#X41;"),
        ErrorCase(
            name: "surrogate character reference",
            text: "<map><string name=\"s\">&#xD800;</string></map>", line: 1, column: 23,
            reasonContains: "&#xD800;"),
    ]

    @Test(arguments: errorCases) func malformedFilesAreErrors(_ testCase: ErrorCase) {
        var bytes = Array(testCase.text.utf8)
        if testCase.name == "invalid UTF-8" { bytes = Array("<map>".utf8) + [0xFF] }
        #expect {
            try SharedPrefsParser.parse(bytes, file: "prefs.xml")
        } throws: { error in
            guard
                case .legacyFormat(let file, let line, let column, let reason) = error
                    as? PreferencesError
            else { return false }
            return file == "prefs.xml" && line == testCase.line && column == testCase.column
                && reason.contains(testCase.reasonContains)
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let text = String(repeating: "<map name=\"a\">", count: 5000)
        #expect(throws: PreferencesError.self) {
            try SharedPrefsParser.parse(Array(("<map>" + text).utf8), file: "f")
        }
    }
}
