/// Marks one stored state of a backend. Two reads return equal revisions
/// only if nothing was written in between.
///
/// The file backend derives it from a write generation kept beside the file
/// and the file's identity (device, inode, size, times); a distributed
/// backend would use its own revision number (etcd's `mod_revision`).
public struct StorageRevision: Hashable, Sendable, CustomStringConvertible {
    /// The backend's token.
    public let token: String

    /// A revision with the backend's token.
    public init(_ token: String) { self.token = token }

    /// The revision of a backend that holds nothing yet.
    public static let absent = StorageRevision("absent")

    /// The token.
    public var description: String { token }
}

/// The stored bytes and the revision they belong to.
public struct StoredContents: Sendable {
    /// The document's bytes, or nil when nothing is stored (a missing file).
    public var bytes: [UInt8]?
    /// The revision the bytes belong to.
    public var revision: StorageRevision

    /// Contents read at `revision`.
    public init(bytes: [UInt8]?, revision: StorageRevision) {
        self.bytes = bytes
        self.revision = revision
    }
}

/// A running watch on a backend; cancelling it releases everything it holds.
public protocol StorageWatch: Sendable {
    func cancel()
}

/// What a backend's watch reports (``PreferencesStorage/watchEvents(_:)``).
public enum StorageWatchEvent: Sendable {
    /// The stored document may have changed. With contents, the backend
    /// already has the new document and its revision (a distributed store's
    /// watch event carries them); the store uses them when they are still the
    /// backend's ``PreferencesStorage/currentRevision()``, and re-reads
    /// otherwise. Without, the store re-reads.
    case changed(StoredContents?)
    /// The watch is interrupted (a dropped connection, an unreachable
    /// cluster); the backend keeps trying to resume it and reports
    /// ``changed(_:)`` once it has. The store lists the error in its problems
    /// meanwhile and keeps its last known state.
    case interrupted(PreferencesError)
}

/// Where a store keeps its document: the seam between the store and the
/// disk (SPEC S12).
///
/// The store reads whole documents and writes them back with
/// compare-and-swap. A backend only moves bytes and revisions; the store
/// does the decoding, the corruption policy and the change feed. The file
/// backend (``FileStorage``) and the in-memory backend
/// (``InMemoryStorage``) implement it, and so could a backend on a
/// distributed key-value store: keep the document under one key, write with
/// a transaction comparing the key's revision, and watch the key.
///
/// A store makes its calls one at a time, in order, never concurrently:
/// on its own serial queue, except that the file and in-memory backends
/// may be read on the opening caller's thread while that queue is idle and
/// held suspended. A backend of your own is always called on the queue.
public protocol PreferencesStorage: AnyObject, Sendable {
    /// The path or address, for messages.
    var location: String { get }

    /// An identity shared by every backend object that addresses the same
    /// data, or nil; stores whose backends share an identity share one
    /// in-memory state within the process (SPEC S9).
    var identity: String? { get }

    /// Reads the document. A backend that holds nothing returns nil bytes with
    /// ``StorageRevision/absent``. I/O failures throw
    /// ``PreferencesError/io(operation:path:code:message:)``.
    func read() throws -> StoredContents

    /// The current revision, cheaply (without reading the document).
    func currentRevision() throws -> StorageRevision

    /// Replaces the document if its revision is still `expected`; returns the
    /// new revision, or nil when someone else wrote first (nothing is written
    /// then). The write is durable when this returns.
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision?

    /// Runs `body` holding exclusive access across processes (the file
    /// backend's `<file>.lock`). Backends without a lock run `body` as is and
    /// rely on ``write(_:ifRevision:)`` failing on a conflict.
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T

    /// Moves the current (corrupt) document aside so that its bytes are kept,
    /// and returns where it went. After it, the backend holds nothing.
    func setAsideCorrupt(stamp: String) throws -> String

    /// Moves `contents` aside as ``setAsideCorrupt(stamp:)`` does, but only
    /// while the backend still holds their revision; returns nil, changing
    /// nothing, when someone wrote in between (the caller re-reads). A
    /// backend without a cross-process lock must compare here; the default
    /// relies on the caller holding ``withExclusiveAccess(_:)``.
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String?

    /// Starts watching for writes made by others, reporting what the backend
    /// knows (see ``StorageWatchEvent``); events may be spurious and come from
    /// any thread, in order. nil when the backend cannot watch. The default
    /// reports each ``watch(_:)`` signal as `.changed(nil)`.
    func watchEvents(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?

    /// How many times the store tries a write that loses its compare-and-swap
    /// before giving up: 8 by default, which only an unlocked writer can
    /// exhaust; a backend without a lock, where every writer competes this
    /// way, asks for more.
    var maxWriteAttempts: Int { get }

    /// The largest document the backend accepts, in bytes, or nil for no
    /// limit of its own (the store's ``PreferencesLimits`` still apply). A
    /// backend refuses a larger document in ``write(_:ifRevision:)`` with
    /// ``PreferencesError/limitExceeded(file:reason:)`` naming this limit,
    /// before sending anything.
    var maxDocumentSize: Int? { get }

    /// Starts watching for writes made by others; `onChange` may be called
    /// spuriously and from any thread. nil when the backend cannot watch.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)?

    /// Publishes the store's key manifest (SPEC 7.6) where `prefs` finds
    /// it, holding exclusive access, atomically and durably; rewrites it
    /// only when `bytes` differ from what is published. The default does
    /// nothing: a backend without a place for it publishes nothing.
    func publishManifest(_ bytes: [UInt8]) throws
}

extension PreferencesStorage {
    /// Publishes nothing.
    public func publishManifest(_ bytes: [UInt8]) throws {}
}

extension PreferencesStorage {
    /// Sets the document aside unconditionally; the caller holds exclusive access.
    public func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try setAsideCorrupt(stamp: stamp)
    }

    /// Reports each signal of ``watch(_:)`` as `.changed(nil)`.
    public func watchEvents(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        try watch { onEvent(.changed(nil)) }
    }

    /// 8 attempts.
    public var maxWriteAttempts: Int { 8 }

    /// No limit of the backend's own.
    public var maxDocumentSize: Int? { nil }
}
