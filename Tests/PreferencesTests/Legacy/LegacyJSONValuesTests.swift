import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyJSONValuesTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let text: String
        let expected: [String: PreferenceValue]
        var testDescription: String { text }
    }

    static let cases: [Case] = [
        Case(text: "{}", expected: [:]),
        Case(text: " \n{ } \n", expected: [:]),
        Case(text: #"{"a": true}"#, expected: ["a": true]),
        Case(text: #"{"a": false}"#, expected: ["a": false]),
        Case(text: #"{"a": null}"#, expected: ["a": .null]),
        Case(text: #"{"a": 1}"#, expected: ["a": 1]),
        Case(text: #"{"a": -1}"#, expected: ["a": -1]),
        Case(text: #"{"a": 0}"#, expected: ["a": 0]),
        Case(text: #"{"a": 9223372036854775807}"#, expected: ["a": .int(.max)]),
        Case(text: #"{"a": 1.0}"#, expected: ["a": 1.0]),
        Case(text: #"{"a": 1e2}"#, expected: ["a": 100.0]),
        Case(text: #"{"a": -0.25}"#, expected: ["a": -0.25]),
        Case(text: #"{"a": "x"}"#, expected: ["a": "x"]),
        Case(text: #"{"a": ""}"#, expected: ["a": ""]),
        Case(text: #"{"a": "\n\t\"\\"}"#, expected: ["a": "\n\t\"\\"]),
        Case(text: #"{"a": "\u00e9"}"#, expected: ["a": "é"]),
        Case(text: #"{"a": "\ud83d\ude00"}"#, expected: ["a": "😀"]),
        Case(text: #"{"a": "é"}"#, expected: ["a": "é"]),
        Case(text: #"{"é": 1}"#, expected: ["é": 1]),
        Case(text: #"{"": 1}"#, expected: ["": 1]),
        Case(text: #"{"a": []}"#, expected: ["a": []]),
        Case(text: #"{"a": [1, "b", null]}"#, expected: ["a": [1, "b", .null]]),
        Case(text: #"{"a": {}}"#, expected: ["a": [:]]),
        Case(text: #"{"a": {"b": {"c": 1}}}"#, expected: ["a": ["b": ["c": 1]]]),
        Case(text: #"{"a": 1, "b": 2}"#, expected: ["a": 1, "b": 2]),
        Case(text: #"{"a": 1, "a": 2}"#, expected: ["a": 2]),
        Case(
            text: #"{"dark_mode": true, "language": "fr", "zoom": 14.5}"#,
            expected: ["dark_mode": true, "language": "fr", "zoom": 14.5]),
        Case(text: #"{"a.b": 1}"#, expected: ["a.b": 1]),
        Case(text: #"{"a": [[[]]]}"#, expected: ["a": [[[]]]]),
        Case(text: "{\r\n\"a\"\r\n:\r\n1\r\n}", expected: ["a": 1]),
    ]

    @Test(arguments: cases) func readsTheObjectAsIs(_ testCase: Case) throws {
        #expect(
            try JSONValuesParser.parse(Array(testCase.text.utf8), file: "v.json")
                == testCase.expected)
    }

    @Test(
        arguments: [
            ("[1, 2]", 1, nil, "an array"),
            ("\"x\"", 1, nil, "a string"),
            ("{\n  \"a\": 1,\n}", 3, 1, ""),
            ("{\"a\": tru}", 1, 7, ""),
            ("", 1, 1, ""),
            ("{} {}", 1, 4, "after"),
        ] as [(String, Int, Int?, String)])
    func malformedIsAnErrorWithPosition(_ text: String, line: Int, column: Int?, contains: String) {
        #expect {
            try JSONValuesParser.parse(Array(text.utf8), file: "v.json")
        } throws: { error in
            guard
                case .legacyFormat(let file, let errorLine, let errorColumn, let reason) = error
                    as? PreferencesError
            else { return false }
            return file == "v.json" && errorLine == line && errorColumn == column
                && (contains.isEmpty || reason.contains(contains)) && !reason.hasPrefix("line")
        }
    }
}
