import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// The key check looks at printable ASCII eight bytes at a time; it must
/// refuse and accept exactly the keys a character-by-character check does.
@Suite(.scaledTimeLimit(minutes: 10)) struct KeyCheckTests {
    /// C0 controls, DEL and C1 controls, by Unicode scalar.
    private func hasControl(_ key: String) -> Bool {
        key.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }
    }

    @Test func everyPositionAndNeighbourIsCheckedAsCharacterByCharacter() {
        let limits = PreferencesLimits()
        // Characters at the edges of the ranges, and multi-byte ones whose
        // UTF-8 holds bytes 0x80 to 0x9F after a lead byte other than 0xC2.
        let pieces = [
            "a", "~", " ", "\u{1F}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{0}", "\t",
            "é", "Â", "\u{C2}", "€", "\u{100}", "😀", "\u{85}",
        ]
        var generator = SeededGenerator(state: 0x5EED)
        for length in 1...40 {
            for _ in 0..<60 {
                var characters = (0..<length).map { _ in "k" }
                // One or two pieces at random places in an otherwise plain key.
                for _ in 0..<Int.random(in: 1...2, using: &generator) {
                    characters[Int.random(in: 0..<length, using: &generator)] =
                        pieces.randomElement(using: &generator)!
                }
                let key = characters.joined()
                let refused = limits.problem(withKey: key) != nil
                #expect(refused == hasControl(key), "key \(Array(key.utf8))")
            }
        }
    }
}

/// The hash that tells the store's own write from another program's must
/// change when any one byte of a file changes, wherever the byte is: in one
/// of the four lanes of a 32-byte step, in the eight-byte steps after
/// them, or in the tail.
@Suite(.scaledTimeLimit(minutes: 10)) struct ContentHashTests {
    @Test func changingAnyOneByteChangesTheHash() {
        var generator = SeededGenerator(state: 0xC0DE)
        for length in [1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 1000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let hash = ContentHash.of(bytes)
            for index in 0..<length {
                var changed = bytes
                changed[index] ^= 1 << UInt8(index % 8)
                #expect(ContentHash.of(changed) != hash, "length \(length), byte \(index)")
            }
            // The same bytes with one more zero byte are another file.
            #expect(ContentHash.of(bytes + [0]) != hash, "length \(length) and a zero")
        }
        #expect(ContentHash.of([]) != ContentHash.of([0]))
    }
}

/// A file revision's text, written digit by digit, reads as the numbers
/// it is made of, at their extremes too.
@Suite(.scaledTimeLimit(minutes: 10)) struct RevisionTokenTests {
    @Test func numbersAreWrittenAsSwiftPrintsThem() {
        let unsigned: [UInt64] = [0, 1, 9, 10, 99, 100, 12_345, UInt64(Int64.max), .max]
        let signed: [Int64] = [0, -1, 7, -10, 1_000_000_007, .min, .max]
        var token = RevisionToken()
        var expected = ""
        for value in unsigned {
            token.append(decimal: value)
            token.append("-")
            token.append(hex: value)
            token.append(".")
            expected += "\(value)-\(String(value, radix: 16))."
        }
        #expect(token.string == expected)
        var signedToken = RevisionToken()
        var signedExpected = ""
        for value in signed {
            signedToken.append(signed: value)
            signedToken.append("/")
            signedExpected += "\(value)/"
        }
        #expect(signedToken.string == signedExpected)
    }
}
