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
/// Calls come from one serial queue per store, never concurrently.
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
