import PreferencesTestSupport
import Testing

@testable import Preferences

/// The reader works on UTF-8 bytes, with a path of its own for keys and
/// values without escapes; the reference reader decodes the text into
/// UTF-16 first, as the JDK does. On random files made of the characters
/// the rules care about, both must give the same values, or the same error.
@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyPropertiesDifferentialTests {
    /// Pieces that exercise separators, white space, line ends,
    /// continuations, comments, escapes (good and malformed, surrogate
    /// halves), characters outside ASCII and plain text.
    static let pieces: [String] = [
        "a", "b", "key", "value with words", "service.option.", "=", ":", " ", "  ", "\t",
        "\u{0C}", "\\", "\\\\", "\\u", "\\u0041", "\\u00e9", "\\uD83D", "\\ude00", "\\ud83d\\ude00",
        "\\u12", "\\uZZ", "\\t", "\\n", "\\=", "\\ ", "0", "4", "e", "F", "\n", "\r", "\r\n",
        "\\\n", "\\\r\n", "#", "!", "é", "😀", "汉", "\u{FEFF}", "\u{85}", "x",
    ]

    /// A small deterministic generator, so that a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static func outcome(_ body: () throws -> [String: PreferenceValue]) -> String {
        do {
            let values = try body()
            return values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                .map { "\(Array($0.utf8)) = \(values[$0]!)" }.joined(separator: "\n")
        } catch {
            return "error: \(error)"
        }
    }

    static func compare(_ bytes: [UInt8], encoding: PropertiesEncoding) -> Bool {
        let ours = outcome { try PropertiesParser.parse(bytes, encoding: encoding, file: "p") }
        let reference = outcome {
            try ReferencePropertiesParser.parse(bytes, encoding: encoding, file: "p")
        }
        return ours == reference
    }

    @Test(arguments: 0..<8)
    func randomTextsReadAsTheReferenceReadsThem(_ seed: Int) {
        var generator = Generator(state: UInt64(seed) &+ 0x5DEE_CE66)
        var failures: [String] = []
        for _ in 0..<400 {
            var text = ""
            for _ in 0..<generator.next(60) {
                text += Self.pieces[generator.next(Self.pieces.count)]
            }
            let bytes = Array(text.utf8)
            for encoding in [PropertiesEncoding.utf8, .iso8859_1]
            where !Self.compare(bytes, encoding: encoding) {
                failures.append("\(encoding): \(text.debugDescription)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test(arguments: 0..<4)
    func randomBytesReadAsTheReferenceReadsThem(_ seed: Int) {
        var generator = Generator(state: UInt64(seed) &+ 0xB5AD_4ECE)
        // Mostly what the rules care about, with any byte now and then
        // (invalid UTF-8 among them).
        let common: [UInt8] = Array("ab=: \t\\u0dD8\n\r#!".utf8) + [0xC3, 0xA9, 0x0C]
        var failures: [[UInt8]] = []
        for _ in 0..<400 {
            var bytes: [UInt8] = []
            for _ in 0..<generator.next(80) {
                bytes.append(
                    generator.next(8) == 0
                        ? UInt8(generator.next(256)) : common[generator.next(common.count)])
            }
            for encoding in [PropertiesEncoding.utf8, .iso8859_1]
            where !Self.compare(bytes, encoding: encoding) {
                failures.append(bytes)
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func aLargeFileReadsAsTheReferenceReadsIt() throws {
        var text = "# exported\n"
        for index in 0..<3_000 {
            switch index % 4 {
            case 0: text += "service.option.\(index) = value \(index) with some text\\u00e9\n"
            case 1: text += "plain.\(index):value \(index)\r\n"
            case 2: text += "joined.\(index) = first \\\n    second é \(index)\n"
            default: text += "  ! comment \(index)\n\\u0041key.\(index) 😀\(index)\r"
            }
        }
        let bytes = Array(text.utf8)
        let ours = try PropertiesParser.parse(bytes, encoding: .utf8, file: "big")
        #expect(ours.count == 3_000)
        #expect(ours == (try ReferencePropertiesParser.parse(bytes, encoding: .utf8, file: "big")))
    }
}
