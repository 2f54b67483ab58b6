import Foundation
import Testing

@testable import Preferences

/// Wraps a backend whose revision check fails once when armed, as a file
/// briefly unreadable or a cluster between leaders would.
private final class FlakyRevisionStorage: PreferencesStorage {
    let base: InMemoryStorage
    let failures = Locked(0)
    init(_ base: InMemoryStorage) { self.base = base }
    var location: String { base.location }
    var identity: String? { nil }
    func read() throws -> StoredContents { try base.read() }
    func currentRevision() throws -> StorageRevision {
        let fail = failures.withLock { count -> Bool in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
        if fail {
            throw PreferencesError.io(
                operation: "read", path: location, code: EIO, message: "injected")
        }
        return try base.currentRevision()
    }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        try base.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try base.withExclusiveAccess(body)
    }
    func setAsideCorrupt(stamp: String) throws -> String { try base.setAsideCorrupt(stamp: stamp) }
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
        try base.watch(onChange)
    }
}

@Suite struct WatcherReloadRetryTests {
    /// The last change before a quiet spell arrives even when the reload it
    /// caused failed: the reload is tried again.
    @Test func aReloadThatFailedIsTriedAgainUntilTheChangeIsRead() async throws {
        let base = InMemoryStorage()
        let flaky = FlakyRevisionStorage(base)
        let store = try await PreferencesStore(storage: flaky)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        flaky.failures.withLock { $0 = 3 }
        // Another writer, straight to the backend: one change, then quiet.
        _ = try base.write(Array(storeFile(#"{ "counter" : 7 }"#).utf8), ifRevision: .absent)
        #expect(await feed.next(7) == 7, "the change was never read: \(store.problems)")
        #expect(store[.counter] == 7)
        #expect(flaky.failures.withLock { $0 } == 0)
    }
}
