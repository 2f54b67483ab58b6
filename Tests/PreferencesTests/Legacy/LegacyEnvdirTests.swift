import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyEnvdirTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let file: String
        let contents: [UInt8]
        /// nil: the key is absent.
        let expected: String?
        var testDescription: String { name }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let cases: [Case] = [
        Case(
            name: "value with newline", file: "IP", contents: bytes("10.8.100.2\n"),
            expected: "10.8.100.2"),
        Case(name: "value without newline", file: "A", contents: bytes("x"), expected: "x"),
        Case(
            name: "only the first line", file: "BAR",
            contents: bytes("bar\nPLEASE IGNORE SECOND LINE\n"), expected: "bar"),
        Case(name: "empty file is absent", file: "UNSET", contents: [], expected: nil),
        Case(name: "lone newline is empty", file: "E", contents: bytes("\n"), expected: ""),
        Case(
            name: "space and newline is empty", file: "EMPTY", contents: bytes(" \n"), expected: ""),
        Case(name: "only spaces is empty", file: "S", contents: bytes("   "), expected: ""),
        Case(name: "trailing spaces removed", file: "T", contents: bytes("v   \n"), expected: "v"),
        Case(name: "trailing tabs removed", file: "T", contents: bytes("v\t\t\n"), expected: "v"),
        Case(
            name: "mixed trailing blanks removed", file: "T", contents: bytes("v \t \t\n"),
            expected: "v"),
        Case(name: "leading blanks kept", file: "L", contents: bytes("   foo"), expected: "   foo"),
        Case(name: "inner blanks kept", file: "I", contents: bytes("a  b\tc"), expected: "a  b\tc"),
        Case(
            name: "NUL becomes newline", file: "FOO",
            contents: bytes("   foo") + [0] + bytes("with new line\n"),
            expected: "   foo\nwith new line"),
        Case(name: "several NULs", file: "N", contents: [0x61, 0, 0, 0x62], expected: "a\n\nb"),
        Case(
            name: "trailing NUL is a newline, not trimmed", file: "N", contents: [0x61, 0],
            expected: "a\n"),
        Case(
            name: "blanks before a NUL kept", file: "N", contents: [0x61, 0x20, 0], expected: "a \n"
        ),
        Case(name: "CR kept", file: "R", contents: bytes("v\r\n"), expected: "v\r"),
        Case(name: "CR in the middle kept", file: "R", contents: bytes("a\rb"), expected: "a\rb"),
        Case(
            name: "quotes literal", file: "HELLO", contents: bytes("\"hello\"\n"),
            expected: "\"hello\""),
        Case(name: "dollar not expanded", file: "D", contents: bytes("$HOME\n"), expected: "$HOME"),
        Case(name: "backslash literal", file: "B", contents: bytes("a\\nb"), expected: "a\\nb"),
        Case(name: "UTF-8 value", file: "U", contents: bytes("Grüße\n"), expected: "Grüße"),
        Case(
            name: "path value", file: "ROOT", contents: bytes("/var/tinydns/root\n"),
            expected: "/var/tinydns/root"),
        Case(
            name: "second line invalid UTF-8 ignored", file: "X", contents: bytes("ok\n") + [0xFF],
            expected: "ok"),
        Case(name: "lower-case name", file: "lower", contents: bytes("1"), expected: "1"),
        Case(name: "name with dot inside", file: "a.b", contents: bytes("1"), expected: "1"),
        Case(name: "name with space", file: "a b", contents: bytes("1"), expected: "1"),
        Case(name: "name with unicode", file: "ÄÖ", contents: bytes("1"), expected: "1"),
        Case(
            name: "form feed not trimmed", file: "F", contents: bytes("a\u{0C}"),
            expected: "a\u{0C}"),
        Case(
            name: "newline first is empty even with more lines", file: "M",
            contents: bytes("\nsecond"), expected: ""),
    ]

    @Test(arguments: cases) func readsLikeDaemontools(_ testCase: Case) throws {
        let entry = EnvdirParser.Entry(
            name: testCase.file, kind: .regular, contents: testCase.contents)
        let contents = try EnvdirParser.parse([entry], directory: "/env")
        #expect(contents.values == (testCase.expected.map { [testCase.file: .string($0)] } ?? [:]))
        #expect(contents.warnings.isEmpty)
    }

    @Test func skippedEntriesAndWarnings() throws {
        let entries: [EnvdirParser.Entry] = [
            .init(name: ".hidden", kind: .regular, contents: Array("x".utf8)),
            .init(name: "..also", kind: .directory, contents: []),
            .init(name: "A=B", kind: .regular, contents: Array("x".utf8)),
            .init(name: "sub", kind: .directory, contents: []),
            .init(name: "fifo", kind: .other, contents: []),
            .init(name: "KEEP", kind: .regular, contents: Array("yes\n".utf8)),
        ]
        let contents = try EnvdirParser.parse(entries, directory: "/svc/env")
        #expect(contents.values == ["KEEP": "yes"])
        #expect(
            contents.warnings == [
                "skipped /svc/env/A=B: a variable name cannot contain '='",
                "skipped /svc/env/fifo: it is not a regular file",
                "skipped /svc/env/sub: it is a directory",
            ])
    }

    @Test func invalidUTF8IsAnErrorNamingTheFile() {
        let entry = EnvdirParser.Entry(name: "BAD", kind: .regular, contents: [0x61, 0xC3, 0x28])
        #expect {
            try EnvdirParser.parse([entry], directory: "/env/")
        } throws: { error in
            guard case .legacyFormat(let file, _, _, let reason) = error as? PreferencesError else {
                return false
            }
            return file == "/env/BAD" && reason.contains("'BAD'") && reason.contains("offset 1")
        }
    }
}
