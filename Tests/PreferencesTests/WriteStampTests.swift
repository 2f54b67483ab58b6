import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// S13 (<doc:StoreGuarantees>): the stamp a write records is the written
/// file's own, taken from its descriptor once it is in place, so the store
/// knows its own write when it looks again: it reads the file back only
/// when someone else changed it.
@Suite struct WriteStampTests {
    @Test func aStoreTakesItsOwnWriteForNoChangeAndReadsOnlyAnothersBack() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let reads = Locked(0)
        let storage = HookedStorage(
            FileStorage(fileURL: url), afterRead: { _ in reads.withLock { $0 += 1 } })
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        // The first write creates the file; the next ones replace it.
        for value in 1...3 {
            try await store.set(.counter, value)
            let before = reads.withLock { $0 }
            try await store.reload()
            #expect(
                reads.withLock { $0 } == before,
                "the store read its own write of \(value) back, as if another had changed the file")
        }
        // Another program's change is read, by the same look.
        try write(#"{"format": 1, "values": {"counter": 9}}"#, to: url)
        let before = reads.withLock { $0 }
        try await store.reload()
        #expect(reads.withLock { $0 } == before + 1)
        #expect(store[.counter] == 9)
    }
}
