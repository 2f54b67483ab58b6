import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

/// One suite every storage backend must pass (SPEC S12).
@Suite struct StorageContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case memory, file, etcd
        var testDescription: String { rawValue }
    }

    /// Every backend that can run here: etcd needs the server installed
    /// (``EtcdAvailabilityTests`` shows as skipped when it is not).
    static let backends: [Backend] = Backend.allCases.filter { $0 != .etcd || etcdAvailable }

    /// A backend, a second handle on the same data (another "process"), and
    /// what keeps its directory alive.
    func make(_ backend: Backend) async throws -> (
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
        case .etcd:
            let cluster = try await SharedEtcd.cluster()
            let key = uniqueKey()
            return (
                try cluster.storage(key, sharesState: false),
                try cluster.storage(key, sharesState: false), directory
            )
        }
    }

    // Backend calls block (etcd's wait on the network), so they run off
    // the cooperative pool; expectations stay on the test's task.

    @Test(arguments: backends)
    func emptyBackendReadsAsAbsent(backend: Backend) async throws {
        let (storage, _, _) = try await make(backend)
        let contents = try await offPool { try storage.read() }
        #expect(contents.bytes == nil)
        #expect(contents.revision == .absent)
        #expect(try await offPool { try storage.currentRevision() } == .absent)
    }

    @Test(arguments: backends)
    func writeThenReadReturnsTheBytesAndANewRevision(backend: Backend) async throws {
        let (storage, other, _) = try await make(backend)
        let revision = try #require(
            try await offPool { try storage.write(Array("one".utf8), ifRevision: .absent) })
        #expect(revision != .absent)
        let contents = try await offPool { try other.read() }
        #expect(contents.bytes == Array("one".utf8))
        #expect(contents.revision == revision)
        #expect(try await offPool { try other.currentRevision() } == revision)
    }

    @Test(arguments: backends)
    func staleRevisionIsRefusedAndWritesNothing(backend: Backend) async throws {
        let (storage, other, _) = try await make(backend)
        let first = try #require(
            try await offPool { try storage.write(Array("one".utf8), ifRevision: .absent) })
        let second = try #require(
            try await offPool { try other.write(Array("two".utf8), ifRevision: first) })
        #expect(second != first)
        #expect(
            try await offPool { try storage.write(Array("three".utf8), ifRevision: first) } == nil)
        #expect(try await offPool { try storage.read() }.bytes == Array("two".utf8))
        #expect(
            try await offPool { try storage.write(Array("four".utf8), ifRevision: .absent) } == nil)
    }

    @Test(arguments: backends)
    func everyWriteMovesTheRevisionEvenWithIdenticalBytes(backend: Backend) async throws {
        let (storage, _, _) = try await make(backend)
        let revisions = try await offPool {
            var revision = StorageRevision.absent
            var all = [revision]
            for _ in 0..<20 {
                guard let next = try storage.write(Array("same".utf8), ifRevision: revision) else {
                    break
                }
                revision = next
                all.append(next)
            }
            return all
        }
        #expect(revisions.count == 21)
        #expect(Set(revisions).count == revisions.count)
    }

    @Test(arguments: backends)
    func corruptDocumentIsSetAsideNotDestroyed(backend: Backend) async throws {
        let (storage, _, directory) = try await make(backend)
        _ = try await offPool { try storage.write(Array("garbage".utf8), ifRevision: .absent) }
        let place = try #require(
            try await offPool {
                try storage.setAsideCorrupt(storage.read(), stamp: "20260101T000000Z")
            })
        #expect(try await offPool { try storage.read() }.bytes == nil)
        switch backend {
        case .file:
            #expect(contents(URL(fileURLWithPath: place)) == "garbage")
            #expect(place == directory.file("store.json").path + ".corrupt-20260101T000000Z")
        case .etcd:
            let etcd = try #require(storage as? EtcdStorage)
            #expect(place == etcd.key + ".corrupt-20260101T000000Z")
            let backup = try EtcdStorage(configuration: etcd.configuration, key: place)
            #expect(try await offPool { try backup.read() }.bytes == Array("garbage".utf8))
        case .memory:
            break
        }
    }

    @Test func aSecondCorruptFileInTheSameSecondDoesNotReplaceTheFirstBackup() throws {
        let directory = try TemporaryDirectory()
        let storage = FileStorage(fileURL: directory.file("store.json"))
        _ = try storage.write(Array("first".utf8), ifRevision: .absent)
        let first = try #require(
            try storage.setAsideCorrupt(storage.read(), stamp: "20260101T000000Z"))
        _ = try storage.write(Array("second".utf8), ifRevision: .absent)
        let second = try #require(
            try storage.setAsideCorrupt(storage.read(), stamp: "20260101T000000Z"))
        #expect(first != second)
        #expect(contents(URL(fileURLWithPath: first)) == "first")
        #expect(contents(URL(fileURLWithPath: second)) == "second")
    }

    @Test(arguments: backends)
    func exclusiveAccessRunsTheBodyAndNests(backend: Backend) async throws {
        let (storage, _, _) = try await make(backend)
        let value = try await offPool {
            try storage.withExclusiveAccess {
                try storage.withExclusiveAccess {
                    try storage.write(Array("x".utf8), ifRevision: .absent) != nil
                }
            }
        }
        #expect(value)
    }

    @Test(arguments: backends)
    func watchSeesAnotherWriterAndStopsWhenCancelled(backend: Backend) async throws {
        let (storage, other, _) = try await make(backend)
        let (events, continuation) = AsyncStream<Void>.makeStream()
        let watch = try #require(try storage.watch { _ in continuation.yield() })
        if let memory = other as? InMemoryStorage {
            memory.replaceExternally(with: Array("external".utf8))
        } else {
            _ = try await offPool { try other.write(Array("external".utf8), ifRevision: .absent) }
        }
        // A watch may signal spuriously (etcd's first signal is its initial
        // read): wait for a signal after which the other writer's bytes show.
        var iterator = events.makeAsyncIterator()
        var seen = false
        for _ in 0..<5 {
            guard await iterator.next() != nil else { break }
            if try await offPool({ try storage.read() }).bytes == Array("external".utf8) {
                seen = true
                break
            }
        }
        #expect(seen)
        watch.cancel()
        if let memory = storage as? InMemoryStorage { #expect(memory.activeWatchCount == 0) }
    }
}
