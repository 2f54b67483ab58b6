import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// XML property lists in every encoding CoreFoundation reads: a byte order
/// mark decides first (UTF-8, UTF-16 and UTF-32, either byte order); without
/// one, a zero in the first two bytes means UTF-16; otherwise the XML
/// declaration's `encoding` does, UTF-8 when there is none.
@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyPropertyListEncodingTests {
    enum Encoding: Sendable {
        case utf8, utf16LE, utf16BE, utf32LE, utf32BE, latin1

        func encode(_ text: String) -> [UInt8] {
            switch self {
            case .utf8: return Array(text.utf8)
            case .utf16LE: return text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            case .utf16BE: return text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            case .utf32LE:
                return text.unicodeScalars.flatMap { scalar in
                    (0..<4).map { UInt8((scalar.value >> (8 * $0)) & 0xFF) }
                }
            case .utf32BE:
                return text.unicodeScalars.flatMap { scalar in
                    (0..<4).reversed().map { UInt8((scalar.value >> (8 * $0)) & 0xFF) }
                }
            case .latin1: return text.unicodeScalars.map { UInt8($0.value) }
            }
        }

        var byteOrderMark: [UInt8] {
            switch self {
            case .utf8: [0xEF, 0xBB, 0xBF]
            case .utf16LE: [0xFF, 0xFE]
            case .utf16BE: [0xFE, 0xFF]
            case .utf32LE: [0xFF, 0xFE, 0x00, 0x00]
            case .utf32BE: [0x00, 0x00, 0xFE, 0xFF]
            case .latin1: []
            }
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let encoding: Encoding
        let byteOrderMark: Bool
        /// The `encoding` pseudo-attribute of the XML declaration, or nil for none.
        let declared: String?
        /// Whether the document has an XML declaration at all.
        var hasDeclaration = true
        var testDescription: String { name }
    }

    /// Non-ASCII in keys and values, a character outside the BMP (a surrogate
    /// pair in UTF-16), and a line end of each kind.
    static let expected: [String: PreferenceValue] = [
        "Größe": "Maß 😀 ½", "list": ["é", 12], "plain": "text",
    ]

    static func document(declaring encoding: String?, declaration: Bool = true) -> String {
        let head =
            declaration
            ? "<?xml version=\"1.0\"\(encoding.map { " encoding=\"\($0)\"" } ?? "")?>\r\n" : ""
        return head
            + "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
            + "<plist version=\"1.0\">\n<dict>\n\t<key>Größe</key>\n\t<string>Maß 😀 ½</string>\r"
            + "\t<key>list</key>\n\t<array><string>&#233;</string><integer>12</integer></array>\n"
            + "\t<key>plain</key>\n\t<string>text</string>\n</dict>\n</plist>\n"
    }

    static let cases: [Case] = [
        Case(name: "UTF-8 with a BOM", encoding: .utf8, byteOrderMark: true, declared: "UTF-8"),
        Case(
            name: "UTF-8 with a BOM, no declaration", encoding: .utf8, byteOrderMark: true,
            declared: nil, hasDeclaration: false),
        Case(
            name: "UTF-16LE with a BOM", encoding: .utf16LE, byteOrderMark: true,
            declared: "UTF-16"),
        Case(
            name: "UTF-16BE with a BOM", encoding: .utf16BE, byteOrderMark: true,
            declared: "UTF-16"),
        Case(
            name: "UTF-16LE with a BOM, declaring UTF-8 (the BOM wins)", encoding: .utf16LE,
            byteOrderMark: true, declared: "UTF-8"),
        Case(
            name: "UTF-16LE without a BOM, declared", encoding: .utf16LE, byteOrderMark: false,
            declared: "UTF-16"),
        Case(
            name: "UTF-16BE without a BOM, declared", encoding: .utf16BE, byteOrderMark: false,
            declared: "utf-16"),
        Case(
            name: "UTF-16LE without a BOM or declaration", encoding: .utf16LE,
            byteOrderMark: false, declared: nil, hasDeclaration: false),
        Case(
            name: "UTF-32LE with a BOM", encoding: .utf32LE, byteOrderMark: true,
            declared: "UTF-32"),
        Case(
            name: "UTF-32BE with a BOM", encoding: .utf32BE, byteOrderMark: true,
            declared: "UTF-32"),
        Case(
            name: "ISO-8859-1 declared", encoding: .latin1, byteOrderMark: false,
            declared: "ISO-8859-1"),
    ]

    static func bytes(_ testCase: Case) -> [UInt8] {
        (testCase.byteOrderMark ? testCase.encoding.byteOrderMark : [])
            + testCase.encoding.encode(
                document(declaring: testCase.declared, declaration: testCase.hasDeclaration))
    }

    @Test(arguments: cases.filter { $0.encoding != .latin1 })
    func everyUnicodeEncodingGivesTheSameValues(_ testCase: Case) throws {
        let values = try PropertyListParser.parse(Self.bytes(testCase), file: "p.plist")
        #expect(values == Self.expected)
    }

    @Test func latin1DeclaredIsReadAsLatin1() throws {
        // Latin-1 has no 😀: the same document with only Latin-1 characters.
        let text = Self.document(declaring: "ISO-8859-1").replacingOccurrences(of: " 😀", with: "")
        let values = try PropertyListParser.parse(Encoding.latin1.encode(text), file: "p.plist")
        var expected = Self.expected
        expected["Größe"] = "Maß ½"
        #expect(values == expected)
    }

    @Test func errorsInUTF16NameTheLineAndColumnInCharacters() {
        let text =
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist><dict>\n"
            + "  <key>ä😀</key><integer>12a</integer></dict></plist>\n"
        for encoding in [Encoding.utf16LE, .utf16BE] {
            #expect {
                try PropertyListParser.parse(
                    encoding.byteOrderMark + encoding.encode(text), file: "p.plist")
            } throws: { error in
                guard
                    case .legacyFormat(let file, let line, let column, let reason) = error
                        as? PreferencesError
                else { return false }
                return file == "p.plist" && line == 3 && column == 16 && reason.contains("12a")
            }
        }
    }

    struct ErrorCase: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let reasonContains: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(
            name: "UTF-16 declared, bytes in UTF-8",
            bytes: Array(document(declaring: "UTF-16").utf8),
            reasonContains: "declares the encoding 'UTF-16'"),
        ErrorCase(
            name: "an encoding the reader does not know",
            bytes: Array(document(declaring: "EBCDIC-XYZ").utf8),
            reasonContains: "'EBCDIC-XYZ'"),
        ErrorCase(
            name: "UTF-16 cut in the middle of a character",
            bytes: [0xFF, 0xFE] + Encoding.utf16LE.encode("<plist><dict/></plist>") + [0x3C],
            reasonContains: "odd number of bytes"),
        ErrorCase(
            name: "UTF-16 with an unpaired surrogate",
            bytes: [0xFE, 0xFF] + Encoding.utf16BE.encode("<dict><key>a</key><string>")
                + [0xD8, 0x3D] + Encoding.utf16BE.encode("</string></dict>"),
            reasonContains: "invalid UTF-16 at byte offset 54"),
        ErrorCase(
            name: "UTF-32 beyond Unicode",
            bytes: [0xFF, 0xFE, 0x00, 0x00] + Encoding.utf32LE.encode("<dict>")
                + [0x00, 0x00, 0x11, 0x00] + Encoding.utf32LE.encode("</dict>"),
            reasonContains: "invalid UTF-32 at byte offset 28"),
        ErrorCase(
            name: "US-ASCII declared, a byte beyond ASCII",
            bytes: Array(document(declaring: "US-ASCII").utf8),
            reasonContains: "not US-ASCII"),
    ]

    @Test(arguments: errorCases) func badEncodingsAreAClearError(_ testCase: ErrorCase) {
        #expect {
            try PropertyListParser.parse(testCase.bytes, file: "p.plist")
        } throws: { error in
            guard case .legacyFormat(let file, _, _, let reason) = error as? PreferencesError
            else { return false }
            return file == "p.plist" && reason.contains(testCase.reasonContains)
        }
    }

    @Test func anImportedUTF16PlistLandsInTheStore() async throws {
        let directory = try TemporaryDirectory()
        let legacy = directory.file("com.example.app.plist")
        try Data([0xFF, 0xFE] + Encoding.utf16LE.encode(Self.document(declaring: "UTF-16")))
            .write(to: legacy)
        let store = try await PreferencesStore(
            fileURL: directory.file("prefs.json"),
            migrations: [LegacyImport(.plist, at: legacy)])
        #expect(store.snapshot.values["Größe"] == "Maß 😀 ½")
        #expect(store.snapshot.values["plain"] == "text")
    }
}
