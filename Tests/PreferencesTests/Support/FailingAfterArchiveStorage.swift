import Foundation
import PreferencesTestSupport
import PreferencesTesting

@testable import Preferences

/// A file backend whose first document write after an append to the
/// history archive fails with EIO: the write that the archive's append
/// comes before, failing at the worst moment, every time. Later writes
/// succeed.
final class FailingAfterArchiveStorage: PreferencesStorage {
    let base: FileStorage
    /// Set by an append to the archive; the next write takes it.
    private let appended = Locked(false)
    /// How many writes failed so: one at most.
    let failures = Locked(0)

    init(_ base: FileStorage) { self.base = base }

    var location: String { base.location }
    var tuning: StorageTuning { base.tuning }
    var manifests: (any ManifestPublishing)? { base.manifests }
    var replicas: (any ReplicaRegistry)? { base.replicas }
    var privacy: (any StoragePrivacy)? { base.privacy }
    func read() throws -> StoredContents { try base.read() }
    func currentRevision() throws -> StorageRevision { try base.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        let afterAppend = appended.withLock { appended in
            defer { appended = false }
            return appended
        }
        let fail =
            afterAppend
            && failures.withLock { failures in
                guard failures == 0 else { return false }
                failures = 1
                return true
            }
        if fail {
            throw PreferencesError.io(
                operation: "write", path: location, code: EIO, message: "injected after the archive"
            )
        }
        return try base.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try base.withExclusiveAccess(body)
    }
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try base.setAsideCorrupt(contents, stamp: stamp)
    }
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    { try base.watch(onEvent) }
    var historyArchive: (any HistoryArchive)? {
        guard let archive = base.historyArchive else { return nil }
        return Archive(base: archive, appended: appended)
    }

    private struct Archive: HistoryArchive {
        let base: any HistoryArchive
        let appended: Locked<Bool>
        var location: String { base.location }
        func read() throws -> ArchivedHistory { try base.read() }
        func append(
            _ entries: [(sequence: Int64, text: [UInt8])], history id: String, keep: HistoryLimit
        ) throws -> String? {
            let place = try base.append(entries, history: id, keep: keep)
            appended.withLock { $0 = true }
            return place
        }
    }
}
