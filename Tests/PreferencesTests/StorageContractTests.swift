import Foundation
import Testing

@testable import Preferences

/// One suite every storage backend must pass (SPEC S12).
@Suite struct StorageContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case memory, file
        var testDescription: String { rawValue }
    }

    /// A backend, a second handle on the same data (another "process"), and
    /// what keeps its directory alive.
    func make(_ backend: Backend) throws -> (
        any PreferencesStorage, any PreferencesStorage, TemporaryDirectory
    ) {
        let directory = try TemporaryDirectory()
        switch backend {
        case .memory:
            let storage = InMemoryStorage()
            return (storage, storage, directory)
        case .file:
            let url = directory.file("store.json")
            return (FileStorage(fileURL: url), FileStorage(fileURL: url), directory)
        }
    }

    @Test(arguments: Backend.allCases)
    func emptyBackendReadsAsAbsent(backend: Backend) throws {
        let (storage, _, _) = try make(backend)
        let contents = try storage.read()
        #expect(contents.bytes == nil)
        #expect(contents.revision == .absent)
        #expect(try storage.currentRevision() == .absent)
    }

    @Test(arguments: Backend.allCases)
    func writeThenReadReturnsTheBytesAndANewRevision(backend: Backend) throws {
        let (storage, other, _) = try make(backend)
        let revision = try #require(try storage.write(Array("one".utf8), ifRevision: .absent))
        #expect(revision != .absent)
        let contents = try other.read()
        #expect(contents.bytes == Array("one".utf8))
        #expect(contents.revision == revision)
        #expect(try other.currentRevision() == revision)
    }

    @Test(arguments: Backend.allCases)
    func staleRevisionIsRefusedAndWritesNothing(backend: Backend) throws {
        let (storage, other, _) = try make(backend)
        let first = try #require(try storage.write(Array("one".utf8), ifRevision: .absent))
        let second = try #require(try other.write(Array("two".utf8), ifRevision: first))
        #expect(second != first)
        #expect(try storage.write(Array("three".utf8), ifRevision: first) == nil)
        #expect(try storage.read().bytes == Array("two".utf8))
    }

    @Test(arguments: Backend.allCases)
    func everyWriteMovesTheRevisionEvenWithIdenticalBytes(backend: Backend) throws {
        let (storage, _, _) = try make(backend)
        var revision = StorageRevision.absent
        var seen: Set<StorageRevision> = [revision]
        for _ in 0..<20 {
            revision = try #require(try storage.write(Array("same".utf8), ifRevision: revision))
            #expect(seen.insert(revision).inserted)
        }
    }

    @Test(arguments: Backend.allCases)
    func corruptDocumentIsSetAsideNotDestroyed(backend: Backend) throws {
        let (storage, _, directory) = try make(backend)
        _ = try storage.write(Array("garbage".utf8), ifRevision: .absent)
        let place = try storage.setAsideCorrupt(stamp: "20260101T000000Z")
        #expect(try storage.read().bytes == nil)
        if backend == .file {
            #expect(contents(URL(fileURLWithPath: place)) == "garbage")
            #expect(place == directory.file("store.json").path + ".corrupt-20260101T000000Z")
        }
    }

    @Test func aSecondCorruptFileInTheSameSecondDoesNotReplaceTheFirstBackup() throws {
        let directory = try TemporaryDirectory()
        let storage = FileStorage(fileURL: directory.file("store.json"))
        _ = try storage.write(Array("first".utf8), ifRevision: .absent)
        let first = try storage.setAsideCorrupt(stamp: "20260101T000000Z")
        _ = try storage.write(Array("second".utf8), ifRevision: .absent)
        let second = try storage.setAsideCorrupt(stamp: "20260101T000000Z")
        #expect(first != second)
        #expect(contents(URL(fileURLWithPath: first)) == "first")
        #expect(contents(URL(fileURLWithPath: second)) == "second")
    }

    @Test(arguments: Backend.allCases)
    func exclusiveAccessRunsTheBodyAndNests(backend: Backend) throws {
        let (storage, _, _) = try make(backend)
        let value = try storage.withExclusiveAccess {
            try storage.withExclusiveAccess {
                try storage.write(Array("x".utf8), ifRevision: .absent) != nil
            }
        }
        #expect(value)
    }

    @Test(arguments: Backend.allCases)
    func watchSeesAnotherWriterAndStopsWhenCancelled(backend: Backend) async throws {
        let (storage, other, _) = try make(backend)
        let (events, continuation) = AsyncStream<Void>.makeStream()
        let watch = try #require(try storage.watch { continuation.yield() })
        if let memory = other as? InMemoryStorage {
            memory.replaceExternally(with: Array("external".utf8))
        } else {
            _ = try other.write(Array("external".utf8), ifRevision: .absent)
        }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        watch.cancel()
        if let memory = storage as? InMemoryStorage { #expect(memory.activeWatchCount == 0) }
    }
}
