import Foundation
import Preferences
import Synchronization

/// A file backend whose manifest reads a test can hold: each read is
/// counted, notes whether it ran within a caller's task, and waits while
/// the gate is closed (at most `holdLimit`, then it notes that it waited out).
/// With `watches: false`, it cannot watch, so a store on it sees other
/// processes' writes only when it re-reads. Everything else is the file
/// backend's.
final class GatedStorage: PreferencesStorage {
    let base: FileStorage
    let gate: ManifestGate
    let watches: Bool

    init(fileURL: URL, holdLimit: Duration = .seconds(30), watches: Bool = true) {
        base = FileStorage(fileURL: fileURL)
        gate = ManifestGate(base: base.manifests!, holdLimit: holdLimit)
        self.watches = watches
    }

    var location: String { base.location }
    var tuning: StorageTuning { base.tuning }
    var historyArchive: (any HistoryArchive)? { base.historyArchive }
    var manifests: (any ManifestPublishing)? { gate }
    var replicas: (any ReplicaRegistry)? { base.replicas }
    var privacy: (any StoragePrivacy)? { base.privacy }
    func read() throws -> StoredContents { try base.read() }
    func currentRevision() throws -> StorageRevision { try base.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        try base.write(bytes, ifRevision: expected)
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
        watches ? try base.watch(onEvent) : nil
    }
}

/// Which task a manifest read runs in: a read made on a caller's thread,
/// within its task, sees the caller's name; one made on a thread of the
/// provider's own sees none.
enum ReadingTask {
    @TaskLocal static var name: String?
}

/// The manifest reads of a ``GatedStorage``.
final class ManifestGate: ManifestPublishing, @unchecked Sendable {
    struct Counts: Sendable, Equatable {
        var reads = 0
        /// Reads made within a task named with ``ReadingTask/name``.
        var inNamedTask = 0
        var waiting = 0
        var waitedOut = 0
    }

    private let base: any ManifestPublishing
    private let holdLimit: Duration
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var closed = false
    private var _counts = Counts()

    init(base: any ManifestPublishing, holdLimit: Duration) {
        self.base = base
        self.holdLimit = holdLimit
    }

    var counts: Counts {
        condition.lock()
        defer { condition.unlock() }
        return _counts
    }

    func close() {
        condition.lock()
        closed = true
        condition.unlock()
    }

    func open() {
        condition.lock()
        closed = false
        condition.broadcast()
        condition.unlock()
    }

    /// Notes a read, then waits while the gate is closed.
    private func pass() {
        condition.lock()
        defer { condition.unlock() }
        _counts.reads += 1
        if ReadingTask.name != nil { _counts.inNamedTask += 1 }
        let limit = Date().addingTimeInterval(
            Double(holdLimit.components.seconds) * testTimeScale)
        _counts.waiting += 1
        while closed {
            if !condition.wait(until: limit) {
                _counts.waitedOut += 1
                break
            }
        }
        _counts.waiting -= 1
    }

    func publish(_ manifest: [UInt8], program: String) throws {
        try base.publish(manifest, program: program)
    }
    func storeManifest() throws -> (bytes: [UInt8], location: String)? {
        pass()
        return try base.storeManifest()
    }
    func programManifests() throws -> [String: [UInt8]] {
        pass()
        return try base.programManifests()
    }
    func manifest(digest: String) throws -> [UInt8]? { try base.manifest(digest: digest) }
}
