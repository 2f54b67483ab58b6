import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Every parser must answer any input with values or a `legacyFormat` error,
/// never a crash or another error: mutated valid documents, seeded so a
/// failure repeats.
@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyRobustnessTests {
    static func mutations(of seed: [UInt8], count: Int, generator: inout SeededGenerator)
        -> [[UInt8]]
    {
        let interesting: [UInt8] =
            Array("<>&;#x/=\"'\\\n\r\0 u".utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]
        return (0..<count).map { _ in
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                guard !bytes.isEmpty else { break }
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[index] = interesting.randomElement(using: &generator)!
                case 1: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 2:
                    bytes.removeSubrange(
                        index..<min(bytes.count, index + Int.random(in: 1...8, using: &generator)))
                default: bytes.insert(interesting.randomElement(using: &generator)!, at: index)
                }
            }
            return bytes
        }
    }

    static func expectOnlyFormatErrors(_ inputs: [[UInt8]], _ parse: ([UInt8]) throws -> Void) {
        for input in inputs {
            do {
                try parse(input)
            } catch let error as PreferencesError {
                guard case .legacyFormat = error else {
                    Issue.record("unexpected error \(error) for \(input)")
                    return
                }
            } catch {
                Issue.record("unexpected error \(error) for \(input)")
                return
            }
        }
    }

    @Test func propertiesNeverCrash() {
        var generator = SeededGenerator(state: 1)
        let seed = Array("# c\na = b\\\n  c\nk\\u0041: \\t v\r\n! x\nlast\\".utf8)
        let inputs = Self.mutations(of: seed, count: 3000, generator: &generator)
        Self.expectOnlyFormatErrors(inputs) {
            _ = try PropertiesParser.parse($0, encoding: .utf8, file: "f")
            _ = try PropertiesParser.parse($0, encoding: .iso8859_1, file: "f")
        }
    }

    @Test func sharedPrefsNeverCrash() {
        var generator = SeededGenerator(state: 2)
        let seed = Array(
            """
            <?xml version='1.0' encoding='utf-8' standalone='yes' ?>
            <map>
                <int name="i" value="1" /><long name="l" value="-2" /><float name="f" value="0.5" />
                <string name="s">a &amp; &#0; <![CDATA[x]]></string><set name="t"><string>z</string></set>
                <list name="li"><int value="3" /></list><map name="m"><null name="n" /></map>
            </map>
            """.utf8)
        let inputs = Self.mutations(of: seed, count: 3000, generator: &generator)
        Self.expectOnlyFormatErrors(inputs) { _ = try SharedPrefsParser.parse($0, file: "f") }
    }

    @Test func propertyListsNeverCrash() throws {
        var generator = SeededGenerator(state: 3)
        let sample: [String: Any] = [
            "a": [1, "two", 3.5, true, Data([1, 2]), Date(timeIntervalSince1970: 0)] as [Any],
            "b": ["c": Int64.max, "é": "ü"] as [String: Any],
        ]
        let xml = Array(
            try PropertyListSerialization.data(fromPropertyList: sample, format: .xml, options: 0))
        let binary = Array(
            try PropertyListSerialization.data(
                fromPropertyList: sample, format: .binary, options: 0))
        let inputs =
            Self.mutations(of: xml, count: 2000, generator: &generator)
            + Self.mutations(of: binary, count: 4000, generator: &generator)
        Self.expectOnlyFormatErrors(inputs) { _ = try PropertyListParser.parse($0, file: "f") }
    }

    @Test func sharedReferencesDoNotExplode() {
        // Eight nested levels of a ten-element array of the next level: 10^8 leaves.
        var objects: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x61]]
        // Level i is object 2 + i and holds object 3 + i ten times.
        for level in 0..<8 {
            objects.append([0xAA] + [UInt8](repeating: UInt8(3 + level), count: 10))
        }
        objects.append([0x09])
        let binary = LegacyPropertyListTests.bplist(objects)
        do {
            _ = try PropertyListParser.parse(binary, file: "f")
            Issue.record("10^8 values were expanded")
        } catch {
            #expect("\(error)".contains("too many objects"))
        }
    }

    @Test func jsonNeverCrashes() {
        var generator = SeededGenerator(state: 4)
        let seed = Array(#"{"a": [1, 2.5, "x\u00e9", null, true], "b": {"c": -3e2}}"#.utf8)
        let inputs = Self.mutations(of: seed, count: 2000, generator: &generator)
        Self.expectOnlyFormatErrors(inputs) { _ = try JSONValuesParser.parse($0, file: "f") }
    }
}
