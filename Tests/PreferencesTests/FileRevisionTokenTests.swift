import Testing

@testable import Preferences

/// A file's revision token is written digit by digit rather than
/// interpolated; it must spell every stamp as the interpolation does, so
/// revisions made either way compare alike.
@Suite struct FileRevisionTokenTests {
    static func interpolated(generation: UInt64, stamp: Platform.FileStamp, hash: UInt64)
        -> String
    {
        "g\(generation)-\(stamp.device)-\(stamp.inode)-\(stamp.size)-\(stamp.modifiedSeconds).\(stamp.modifiedNanoseconds)-\(stamp.changedSeconds).\(stamp.changedNanoseconds)-\(String(hash, radix: 16))"
    }

    static func stamp(_ numbers: [Int64], device: UInt64, inode: UInt64) -> Platform.FileStamp {
        Platform.FileStamp(
            device: device, inode: inode, size: numbers[0], modifiedSeconds: numbers[1],
            modifiedNanoseconds: numbers[2], changedSeconds: numbers[3],
            changedNanoseconds: numbers[4], isRegularFile: true, isDirectory: false, mode: 0o600,
            uid: 0, gid: 0)
    }

    @Test func everyNumberIsSpelledAsInterpolationSpellsIt() {
        let edges: [Int64] = [0, 1, 9, 10, 999_999_999, -1, -86_400, .max, .min]
        let unsignedEdges: [UInt64] = [0, 7, 10, 0xF, 0x10, .max, UInt64(Int64.max) + 1]
        var generator = SeededGenerator(state: 42)
        for round in 0..<2_000 {
            let numbers = (0..<5).map { _ in
                round < 200
                    ? edges.randomElement(using: &generator)!
                    : Int64.random(in: .min ... .max, using: &generator)
            }
            let unsigned = (0..<4).map { _ in
                round < 200
                    ? unsignedEdges.randomElement(using: &generator)!
                    : UInt64.random(in: 0 ... .max, using: &generator) >> (round % 64)
            }
            let stamp = Self.stamp(numbers, device: unsigned[0], inode: unsigned[1])
            #expect(
                FileStorage.revisionToken(generation: unsigned[2], stamp: stamp, hash: unsigned[3])
                    == Self.interpolated(generation: unsigned[2], stamp: stamp, hash: unsigned[3]))
        }
    }
}
