import Preferences
import Testing

@testable import CrashStates

/// The persistence models on records built by hand: the states each must
/// build (ALICE's abstract model for POSIX) and those ext4 rules out.
struct PersistenceModelTests {
    static let root = "/r"

    /// The trees every crash point of `calls` may leave under `model`.
    func trees(
        _ calls: [DiskOperation], _ model: PersistenceModel, initial: FileTree = FileTree()
    ) throws -> [FileTree] {
        let record = try BrokenRecord(calls: calls, root: Self.root, initial: initial)
        let builder = CrashStateBuilder(record: record, model: model)
        return (-1..<calls.count).flatMap { builder.states(after: $0).map(\.tree) }
    }

    func file(_ tree: FileTree, _ name: String) -> [UInt8]? { tree.entries[name]?.bytes }

    @Test func aLaterEntryMayPersistWhileAnEarlierOneIsLost() throws {
        let calls: [DiskOperation] = [
            .create(path: "/r/a", mode: 0o600), .create(path: "/r/b", mode: 0o600),
            .create(path: "/r/c", mode: 0o600),
        ]
        let posix = try trees(calls, .posix)
        #expect(posix.contains { $0.entries.keys.sorted() == ["b"] })
        #expect(posix.contains { $0.entries.keys.sorted() == ["a", "c"] })
        // ext4's journal keeps them in order.
        let ext4 = try trees(calls, .ext4)
        #expect(!ext4.contains { $0.entries.keys.sorted() == ["b"] })
        #expect(ext4.contains { $0.entries.keys.sorted() == ["a", "b"] })
    }

    @Test func anAppendPersistsInPartWithZerosAndGarbage() throws {
        let data = Array("0123456789ab".utf8)
        let initial = FileTree(entries: ["f": .file(Array("old".utf8))])
        let calls: [DiskOperation] = [.write(path: "/r/f", offset: 3, bytes: data)]
        let contents = try trees(calls, .posix, initial: initial).compactMap { file($0, "f") }
        let old = Array("old".utf8)
        // One piece: the whole range as zeros, or as garbage.
        #expect(contents.contains(old + [UInt8](repeating: 0, count: 12)))
        #expect(
            contents.contains {
                $0.count == 15 && $0[3...].allSatisfy { $0 != 0 } && Array($0[3...]) != data
            })
        // Three pieces: the first third arrived, the rest not yet there.
        #expect(contents.contains(old + Array(data[0..<4])))
        #expect(contents.contains(old + Array(data[0..<4]) + [UInt8](repeating: 0, count: 4)))
        // ext4's ordered data never shows zeros or garbage.
        let ext4 = try trees(calls, .ext4, initial: initial).compactMap { file($0, "f") }
        #expect(Set(ext4) == [old, old + data])
    }

    @Test func anOverwritePersistsInPieces() throws {
        let initial = FileTree(entries: ["f": .file(Array("aaaaaaaaa".utf8))])
        let calls: [DiskOperation] = [
            .write(path: "/r/f", offset: 0, bytes: Array("bbbbbbbbb".utf8))
        ]
        let contents = try trees(calls, .posix, initial: initial).compactMap { file($0, "f") }
        #expect(contents.contains(Array("bbbaaaaaa".utf8)))
        #expect(contents.contains(Array("bbbbbbaaa".utf8)))
        // A prefix less one piece.
        #expect(contents.contains(Array("aaabbbaaa".utf8)))
    }

    @Test func anUnlinkTruncatesBeforeItsEntryGoes() throws {
        let initial = FileTree(entries: ["f": .file(Array("abcdefghi".utf8))])
        let calls: [DiskOperation] = [.unlink(path: "/r/f")]
        let posix = try trees(calls, .posix, initial: initial)
        #expect(posix.contains { file($0, "f") == [] })
        #expect(posix.contains { file($0, "f") == Array("abcdef".utf8) })
        #expect(posix.contains { file($0, "f") == Array("abc".utf8) })
        #expect(posix.contains { $0.entries["f"] == nil })
        // On ext4 an unlink is journalled whole.
        let ext4 = try trees(calls, .ext4, initial: initial)
        #expect(Set(ext4.map { file($0, "f") }) == [Array("abcdefghi".utf8), nil])
    }

    @Test func aTruncationShrinksPieceByPiece() throws {
        let initial = FileTree(entries: ["f": .file(Array("abcdefghi".utf8))])
        let calls: [DiskOperation] = [.truncate(path: "/r/f", length: 3)]
        let contents = try trees(calls, .posix, initial: initial).compactMap { file($0, "f") }
        // Three pieces of two bytes, from the end.
        #expect(contents.contains(Array("abcdefg".utf8)))
        #expect(contents.contains(Array("abcde".utf8)))
        let ext4 = try trees(calls, .ext4, initial: initial).compactMap { file($0, "f") }
        #expect(Set(ext4) == [Array("abcdefghi".utf8), Array("abc".utf8)])
    }

    @Test func aRenamedDirectoryKeepsItsFilesAndLosesThemOneByOne() throws {
        let initial = FileTree(entries: [
            "d": .directory, "d/x": .file(Array("1".utf8)), "d/y": .file(Array("2".utf8)),
        ])
        let calls: [DiskOperation] = [
            .rename(from: "/r/d", to: "/r/e"), .syncDirectory(path: "/r"),
            .unlink(path: "/r/e/x"), .unlink(path: "/r/e/y"), .unlink(path: "/r/e"),
        ]
        let posix = try trees(calls, .posix, initial: initial)
        // Renamed, the directory still holds its files, under its new name.
        #expect(posix.contains { file($0, "e/x") == Array("1".utf8) && file($0, "e/y") != nil })
        // Its files are removed in any order, before it goes.
        #expect(posix.contains { $0.entries["e/x"] == nil && file($0, "e/y") == Array("2".utf8) })
        #expect(posix.contains { file($0, "e/x") == Array("1".utf8) && $0.entries["e/y"] == nil })
        #expect(posix.contains { $0.entries.isEmpty })
    }

    @Test func anExt4FsyncCommitsEveryEntryMadeBeforeIt() throws {
        let calls: [DiskOperation] = [
            .makeDirectory(path: "/r/d"), .create(path: "/r/d/a", mode: 0o600),
            .create(path: "/r/b", mode: 0o600), .sync(path: "/r/b"),
        ]
        let record = try BrokenRecord(calls: calls, root: Self.root, initial: FileTree())
        // After the fsync of b, no directory was synced, yet ext4 has all.
        let ext4 = CrashStateBuilder(record: record, model: .ext4).states(after: 3)
        #expect(ext4.map { $0.tree.entries.keys.sorted() } == [["b", "d", "d/a"]])
        let posix = CrashStateBuilder(record: record, model: .posix).states(after: 3)
        #expect(posix.contains { $0.tree.entries.isEmpty })
    }
}
