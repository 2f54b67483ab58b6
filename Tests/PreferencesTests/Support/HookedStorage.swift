import Foundation
import PreferencesTestSupport

@testable import Preferences

/// Wraps a backend so a test can act at an exact point of the store's work:
/// `afterRead` runs on every document read, and `beforeRevision` runs before
/// every revision check and may throw to make it fail, and `beforeWrite`
/// runs before every write. All three run on the store's queue. `watchWith`, when given, starts the watch instead of the
/// backend (a chosen watch mechanism, say). Everything else the backend
/// offers — its tuning, archive, manifests, replicas, privacy — is the
/// backend's; only its identity is not, so a hooked store never shares the
/// state of an unhooked one.
final class HookedStorage: PreferencesStorage {
    typealias WatchStarter =
        @Sendable (@escaping @Sendable () -> Void) throws -> (any StorageWatch)?
    let base: any PreferencesStorage
    let afterRead: @Sendable (StoredContents) -> Void
    let beforeRevision: @Sendable () throws -> Void
    let beforeWrite: @Sendable () -> Void
    let watchWith: WatchStarter?

    init(
        _ base: any PreferencesStorage,
        afterRead: @escaping @Sendable (StoredContents) -> Void = { _ in },
        beforeRevision: @escaping @Sendable () throws -> Void = {},
        beforeWrite: @escaping @Sendable () -> Void = {},
        watchWith: WatchStarter? = nil
    ) {
        self.base = base
        self.afterRead = afterRead
        self.beforeRevision = beforeRevision
        self.beforeWrite = beforeWrite
        self.watchWith = watchWith
    }

    var location: String { base.location }
    var tuning: StorageTuning { base.tuning }
    var historyArchive: (any HistoryArchive)? { base.historyArchive }
    var manifests: (any ManifestPublishing)? { base.manifests }
    var replicas: (any ReplicaRegistry)? { base.replicas }
    var privacy: (any StoragePrivacy)? { base.privacy }
    func read() throws -> StoredContents {
        let contents = try base.read()
        afterRead(contents)
        return contents
    }
    func currentRevision() throws -> StorageRevision {
        try beforeRevision()
        return try base.currentRevision()
    }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        beforeWrite()
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
    {
        if let watchWith { return try watchWith { onEvent(.changed(nil)) } }
        return try base.watch(onEvent)
    }
}
