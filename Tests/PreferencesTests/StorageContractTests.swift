import Foundation
import Preferences
import PreferencesTestSupport
import PreferencesTesting
import Testing

/// Every backend in this package keeps the storage contract (S12,
/// `PreferencesTesting`'s `StorageContract`), and so does one written only
/// for this test with the public protocol alone. The etcd backend runs it
/// in `PreferencesEtcdTests`.
@Suite(.scaledTimeLimit(minutes: 5))
struct StorageContractTests {
    @Test func theFileBackendKeepsTheContract() async throws {
        try await StorageContract(Self.files { $0 }).run()
    }

    /// A wrapper that forwards what it wraps keeps the file backend's
    /// archive, manifests, replicas and privacy, each held to its rules.
    @Test func aHookedFileBackendKeepsItsCapabilitiesAndTheContract() async throws {
        let directory = try TemporaryDirectory()
        let file = FileStorage(fileURL: directory.file("store.json"))
        let hooked = HookedStorage(file)
        #expect(hooked.historyArchive != nil, "a hooked file backend has no history archive")
        #expect(hooked.manifests != nil, "a hooked file backend has no manifests")
        #expect(hooked.replicas != nil, "a hooked file backend has no replicas")
        #expect(hooked.privacy != nil, "a hooked file backend has no privacy")
        #expect(hooked.tuning == file.tuning, "a hooked file backend has other tuning")
        try await StorageContract(Self.files { HookedStorage($0) }).run()
    }

    @Test func theInMemoryBackendKeepsTheContract() async throws {
        try await StorageContract { _ in
            let storage = InMemoryStorage()
            return StorageContract.Subject(
                storage: storage, otherHandle: storage,
                readSetAside: { place in storage.setAside[place] })
        }.run()
    }

    /// A backend that offers a capability its subject does not declare, or
    /// declares one it does not offer, fails the contract, naming it.
    @Test func aCapabilityOfferedButNotDeclaredOrTheOtherWayRoundFailsTheContract() async throws {
        let check = try #require(
            StorageContract.checks.first { $0.description.hasPrefix("S12: the backend offers") })
        // A file backend declaring all but privacy; a backend offering
        // nothing declaring a history archive.
        let cases: [(offersAll: Bool, declared: StorageContract.Capabilities, says: String)] = [
            (true, StorageContract.Capabilities.all.subtracting(.privacy), "does not declare"),
            (false, .historyArchive, "does not offer what"),
        ]
        for (offersAll, declared, says) in cases {
            let named = offersAll ? "privacy" : "historyArchive"
            try await withKnownIssue("\(named) \(says)") {
                try await StorageContract { directory in
                    let storage: any PreferencesStorage =
                        offersAll
                        ? FileStorage(fileURL: directory.appendingPathComponent("store.json"))
                        : RevisionDirectoryStorage(
                            directory: directory, breaksCompareAndSwap: false)
                    return StorageContract.Subject(
                        storage: storage, otherHandle: storage, readSetAside: { _ in nil },
                        offering: declared)
                }.run(check)
            } matching: { issue in
                issue.comments.contains {
                    $0.rawValue.contains(says) && $0.rawValue.hasSuffix(named)
                }
            }
        }
    }

    @Test func aBackendWrittenOutsideThePackageKeepsTheContract() async throws {
        try await StorageContract(Self.revisionDirectory(breakingCompareAndSwap: false)).run()
    }

    @Test func aBackendWhoseCompareAndSwapIgnoresTheRevisionFailsTheContract() async throws {
        // withKnownIssue fails the test when the contract records nothing,
        // and records any issue the matcher does not accept as a failure.
        try await withKnownIssue(
            "a compare-and-swap that ignores the revision must fail the contract"
        ) {
            try await StorageContract(Self.revisionDirectory(breakingCompareAndSwap: true)).run()
        } matching: { issue in
            Self.isCompareAndSwapFailure(issue)
        }
    }

    /// What the contract's expectations say when a backend accepts a write
    /// whatever revision it compares: the compare-and-swap check's (S3, S12).
    static let compareAndSwapFailures = [
        "a write comparing a stale revision was accepted",
        "a write comparing .absent replaced an existing document",
        "a refused write changed the document",
        "a refused write moved the revision",
    ]

    /// How the checks of racing writers (S3) and racing stores (S3, S4)
    /// begin what they say when increments are lost, as they may be (it
    /// varies from run to run) when compare-and-swap lets every write through.
    static let lostIncrements = [
        "two writers racing 50 increments each ended at ",
        "two stores' 25 increments each ended at ",
    ]

    /// Whether `issue` is a failed expectation of a broken compare-and-swap:
    /// not a check that timed out or threw, which the contract records with
    /// `Issue.record` and the check's name.
    static func isCompareAndSwapFailure(_ issue: Issue) -> Bool {
        guard case .expectationFailed = issue.kind else { return false }
        return issue.comments.contains { comment in
            compareAndSwapFailures.contains(comment.rawValue)
                || lostIncrements.contains { comment.rawValue.hasPrefix($0) }
        }
    }

    /// File backends on `store.json` in the check's directory, each made
    /// into the subject's backend by `wrap`.
    static func files(_ wrap: @escaping @Sendable (FileStorage) -> any PreferencesStorage)
        -> StorageContract.Factory
    {
        { directory in
            let url = directory.appendingPathComponent("store.json")
            return StorageContract.Subject(
                storage: wrap(FileStorage(fileURL: url)),
                otherHandle: wrap(FileStorage(fileURL: url)),
                readSetAside: { place in try? Array(Data(contentsOf: URL(fileURLWithPath: place)))
                }, offering: .all,
                makeReadableByOthers: {
                    guard chmod(url.path, 0o644) == 0 else {
                        throw PreferencesError.io(
                            operation: "chmod", path: url.path, code: errno, message: "chmod failed"
                        )
                    }
                })
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
