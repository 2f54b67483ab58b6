import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 5)) struct WatcherReloadRetryTests {
    /// The last change before a quiet spell arrives even when the reload it
    /// caused failed: the reload is tried again.
    @Test func aReloadThatFailedIsTriedAgainUntilTheChangeIsRead() async throws {
        let base = InMemoryStorage()
        let failures = Locked(0)
        // The backend's revision check fails while `failures` counts down, as
        // a file briefly unreadable or a cluster between leaders would.
        let flaky = HookedStorage(
            base,
            beforeRevision: {
                let fail = failures.withLock { count -> Bool in
                    guard count > 0 else { return false }
                    count -= 1
                    return true
                }
                if fail {
                    throw PreferencesError.io(
                        operation: "read", path: base.location, code: EIO, message: "injected")
                }
            })
        let store = try await PreferencesStore(storage: flaky)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        failures.withLock { $0 = 3 }
        // Another writer, straight to the backend: one change, then quiet.
        _ = try base.write(Array(storeFile(#"{ "counter" : 7 }"#).utf8), ifRevision: .absent)
        #expect(await feed.next(7) == 7, "the change was never read: \(store.problems)")
        #expect(store[.counter] == 7)
        #expect(failures.withLock { $0 } == 0)
    }
}
