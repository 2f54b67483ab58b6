import PreferencesTestSupport
import Testing

@testable import Preferences

/// Keys are written in the order of their UTF-8 bytes; the sort of the
/// document writer must give exactly the order of a plain comparison of
/// those bytes, whatever the keys share.
@Suite(.scaledTimeLimit(minutes: 10)) struct ByteKeySortTests {
    static func sortedByBytes(_ keys: [String]) -> [String] {
        keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    static func sortedByByteKeySort(_ keys: [String]) -> [String] {
        var sort = ByteKeySort(capacity: keys.count)
        for key in keys { sort.append(key) }
        return sort.sortedOrder().map { keys[$0] }
    }

    @Test(arguments: 0..<6)
    func randomKeysComeOutInTheOrderOfTheirBytes(_ seed: Int) {
        var state = UInt64(seed) &* 0x9E37_79B9 &+ 1
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let pieces = [
            "a", "b", "z", "A", "0", "9", ".", "é", "e\u{301}", "😀", "\u{7F}", "\u{0}",
            "service.option.", "ÿ", "汉", "",
        ]
        let count = [0, 1, 2, 13, 200, 3_000][seed]
        var keys = Set<String>()
        while keys.count < count {
            var key = ""
            for _ in 0..<next(8) { key += pieces[next(pieces.count)] }
            keys.insert(key)
        }
        let list = Array(keys)
        #expect(Self.sortedByByteKeySort(list) == Self.sortedByBytes(list))
    }

    @Test func keysThatArePrefixesOfOthersComeFirst() {
        let keys = ["abc", "ab", "abcd", "a", "", "abd", "b", "abc\u{0}", "aaaaaaaaaaaaaaaaaaaa"]
        #expect(Self.sortedByByteKeySort(keys) == Self.sortedByBytes(keys))
    }

    @Test func tenThousandKeysWithALongCommonPrefix() {
        let keys = (0..<10_000).map { "service.option.\(($0 * 7_919) % 10_000)" }
        #expect(Self.sortedByByteKeySort(keys) == Self.sortedByBytes(keys))
    }
}
