import Foundation
import Preferences
import PreferencesTestSupport
import PreferencesTesting
import Testing

/// Every backend in this package keeps the storage contract (S12,
/// `PreferencesTesting`'s `StorageContract`), and so does one written only
/// for this test with the public protocol alone. The etcd backend runs it
/// in `PreferencesEtcdTests`.
@Suite(.timeLimit(.minutes(5)))
struct StorageContractTests {
    @Test func theFileBackendKeepsTheContract() async throws {
        try await StorageContract { directory in
            let url = directory.appendingPathComponent("store.json")
            return StorageContract.Subject(
                storage: FileStorage(fileURL: url), otherHandle: FileStorage(fileURL: url),
                readSetAside: { place in try? Array(Data(contentsOf: URL(fileURLWithPath: place))) }
            )
        }.run()
    }

    @Test func theInMemoryBackendKeepsTheContract() async throws {
        try await StorageContract { _ in
            let storage = InMemoryStorage()
            return StorageContract.Subject(
                storage: storage, otherHandle: storage,
                readSetAside: { place in storage.setAside[place] })
        }.run()
    }

    @Test func aBackendWrittenOutsideThePackageKeepsTheContract() async throws {
        try await StorageContract(Self.revisionDirectory(breakingCompareAndSwap: false)).run()
    }

    @Test func aBackendWhoseCompareAndSwapIgnoresTheRevisionFailsTheContract() async throws {
        // withKnownIssue fails the test when the contract records nothing.
        await withKnownIssue("a compare-and-swap that ignores the revision must fail the contract")
        {
            try await StorageContract(Self.revisionDirectory(breakingCompareAndSwap: true)).run()
        }
    }

    static func revisionDirectory(breakingCompareAndSwap: Bool) -> StorageContract.Factory {
        { directory in
            StorageContract.Subject(
                storage: RevisionDirectoryStorage(
                    directory: directory, breaksCompareAndSwap: breakingCompareAndSwap),
                otherHandle: RevisionDirectoryStorage(
                    directory: directory, breaksCompareAndSwap: breakingCompareAndSwap),
                readSetAside: { place in try? Array(Data(contentsOf: URL(fileURLWithPath: place))) }
            )
        }
    }
}
