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
    /// Stops the watch and releases what it holds; changes made after it
    /// returns are not reported.
    func cancel()
}

/// What a backend's watch reports (``PreferencesStorage/watch(_:)``).
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
/// disk (S12, <doc:StoreGuarantees>).
///
/// A backend only moves bytes and revisions; the store does everything
/// else — decoding, the corruption policy, edits and group commit,
/// migrations, the change feed. The store reads the whole document with
/// ``read()`` and writes it back with ``write(_:ifRevision:)``, a
/// compare-and-swap on the revision it read. The file backend
/// (``FileStorage``), the in-memory backend (``InMemoryStorage``) and the
/// etcd backend (`EtcdStorage`, in `PreferencesEtcd`) implement it; a
/// backend of your own proves itself against the same contract with
/// `StorageContract` from the `PreferencesTesting` library (see
/// <doc:ImplementingAStorageBackend>).
///
/// ## The calling contract
///
/// - **One call at a time.** A store makes its calls one at a time, in
///   order, never concurrently: on its own serial dispatch queue — or, for a
///   backend whose ``StorageTuning/readsAreLocal`` is true, sometimes on the
///   thread opening or reloading the store while that queue is idle and held
///   suspended. Other code (a test, a tool holding
///   ``PreferencesStore/storage``) may call a backend from other threads at
///   the same time; a backend is `Sendable` and must stay consistent then.
/// - **Calls may block.** A network backend blocks until its server answers
///   or its own timeout passes; the store never calls a backend from Swift's
///   cooperative pool unless ``StorageTuning/readsAreLocal`` says reads are
///   quick.
/// - **Revisions never lie.** Two reads return equal revisions only if
///   nothing was written in between, and every successful write returns a
///   revision never returned before, even for identical bytes.
/// - **Errors.** I/O failures throw
///   ``PreferencesError/io(operation:path:code:message:)`` naming the
///   operation and ``location``; a document over
///   ``StorageTuning/maxDocumentSize`` is refused with
///   ``PreferencesError/limitExceeded(file:reason:)``. A lost
///   compare-and-swap is not an error: it returns nil.
/// - **Nothing destroyed.** A backend never discards a document's bytes
///   except by replacing them with a newer document through
///   ``write(_:ifRevision:)``; ``setAsideCorrupt(_:stamp:)`` keeps them.
///
/// ## Capabilities
///
/// What a backend can do beyond the document — keep older history, publish
/// key manifests, register replicas, keep a document private — is an
/// object it returns, or nil: ``historyArchive``, ``manifests``,
/// ``replicas``, ``privacy``. None has a default, so a backend says what
/// it offers, and a backend that wraps another forwards what it wraps
/// (`var historyArchive: (any HistoryArchive)? { base.historyArchive }`).
/// `StorageContract` holds each capability a backend offers to its rules.
public protocol PreferencesStorage: AnyObject, Sendable {
    /// The path or address, for messages.
    var location: String { get }

    /// Reads the document. A backend that holds nothing returns nil bytes with
    /// ``StorageRevision/absent``.
    func read() throws -> StoredContents

    /// The current revision, cheaply (without reading the document where the
    /// backend can), equal to what ``read()`` would return with the bytes.
    func currentRevision() throws -> StorageRevision

    /// Replaces the document if its revision is still `expected`; returns the
    /// new revision, or nil when someone else wrote first (nothing is written
    /// then). The write is durable when this returns: on disk, or
    /// acknowledged by a quorum.
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision?

    /// Runs `body` holding exclusive access across processes (the file
    /// backend's `<file>.lock`), re-entrantly on one thread. Backends without
    /// a lock run `body` as is and rely on ``write(_:ifRevision:)`` failing
    /// on a conflict (see ``StorageTuning/maxWriteAttempts``).
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T

    /// Moves the (corrupt) document aside, keeping its bytes, if the backend
    /// still holds `contents.revision`; returns where the bytes went (the
    /// file backend: `<file>.corrupt-<stamp>`, never replacing an earlier
    /// backup). nil, changing nothing, when someone wrote in between (the
    /// caller re-reads). After it, the backend holds nothing.
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String?

    /// Starts watching for writes made by others, reporting what the backend
    /// knows (see ``StorageWatchEvent``); events may be spurious and come
    /// from any thread, in order. nil when the backend cannot watch: the
    /// store then sees other writers' changes when it writes or reloads.
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?

    /// Called as a store begins opening on this backend; the store ends the
    /// returned open once it is done, opened or not. Its
    /// ``StorageOpening/identity`` says which stores share one in-memory
    /// state (S9). The default: no identity, nothing to end.
    func beginOpening() -> StorageOpening

    /// How the store drives this backend: write attempts, the largest
    /// document, whether reads are local. The default suits a backend with a
    /// lock and no limit of its own whose reads may wait.
    var tuning: StorageTuning { get }

    /// Where the backend keeps history entries older than those its
    /// document carries (<doc:HistoryAndUndo>), or nil: then the document
    /// carries every entry kept. An archive spares every write the rewrite
    /// of the whole history.
    var historyArchive: (any HistoryArchive)? { get }

    /// Where the backend publishes the key manifests that programs declare
    /// (7.6, <doc:CommandLineTool>; F1, <doc:RollingOutAChange>), or nil
    /// when it has no place for them.
    var manifests: (any ManifestPublishing)? { get }

    /// Where the processes with the store open register (F2,
    /// <doc:RollingOutAChange>), or nil when the backend cannot tell who
    /// uses it.
    var replicas: (any ReplicaRegistry)? { get }

    /// How the backend keeps a document holding secrets readable by its
    /// owner only (A3, <doc:ChangingSettingsSafely>), or nil for a backend
    /// without permissions of its own.
    var privacy: (any StoragePrivacy)? { get }
}

extension PreferencesStorage {
    /// No identity: every store on its own; nothing to end.
    public func beginOpening() -> StorageOpening { StorageOpening(identity: nil) }

    /// 8 write attempts, no size limit of the backend's own, reads that may wait.
    public var tuning: StorageTuning { StorageTuning() }
}

/// One store's open on a backend (``PreferencesStorage/beginOpening()``):
/// which stores share its state, and what ends it.
///
/// A backend may resolve what it addresses once for the whole open (the
/// file backend resolves a symlink once, which saves a `readlink` on each
/// read of the open) and forget that resolution in ``end()``.
public struct StorageOpening: Sendable {
    /// An identity shared by every backend object that addresses the same
    /// data, or nil; stores whose backends share an identity share one
    /// in-memory state within the process (S9, <doc:StoreGuarantees>).
    public var identity: String?
    private let onEnd: @Sendable () -> Void

    /// An open with `identity`, calling `onEnd` when the store is done opening.
    public init(identity: String?, onEnd: @escaping @Sendable () -> Void = {}) {
        self.identity = identity
        self.onEnd = onEnd
    }

    /// Ends the open; the store calls it once.
    public func end() { onEnd() }
}

/// How a store drives its backend (``PreferencesStorage/tuning``).
public struct StorageTuning: Sendable, Hashable {
    /// How many times the store tries a write that loses its
    /// compare-and-swap before giving up: 8 by default, which only an
    /// unlocked writer can exhaust; a backend without a lock, where every
    /// writer competes this way, asks for more.
    public var maxWriteAttempts: Int
    /// The largest document the backend accepts, in bytes, or nil for no
    /// limit of its own (the store's ``PreferencesLimits`` still apply). A
    /// backend refuses a larger document in
    /// ``PreferencesStorage/write(_:ifRevision:)`` with
    /// ``PreferencesError/limitExceeded(file:reason:)`` naming this limit,
    /// before sending anything.
    public var maxDocumentSize: Int?
    /// Whether ``PreferencesStorage/read()`` and
    /// ``PreferencesStorage/currentRevision()`` are local and quick enough to
    /// run on a caller's thread, which saves an open two thread hops: true
    /// for a file or memory, false for anything that can wait on a network.
    public var readsAreLocal: Bool

    /// Tuning with the given values; each default suits a backend with a
    /// lock, no limit of its own, and reads that may wait.
    public init(maxWriteAttempts: Int = 8, maxDocumentSize: Int? = nil, readsAreLocal: Bool = false)
    {
        self.maxWriteAttempts = maxWriteAttempts
        self.maxDocumentSize = maxDocumentSize
        self.readsAreLocal = readsAreLocal
    }
}

/// How a backend keeps a document that holds secrets readable by its owner
/// only (A3, <doc:ChangingSettingsSafely>; ``PreferencesStorage/privacy``).
public protocol StoragePrivacy: Sendable {
    /// Makes every later write keep the document readable by its owner
    /// only; returns whether the stored document is readable by others now
    /// (the next write narrows it). The store calls it, holding exclusive
    /// access, before each write of a document with secrets.
    func keepPrivate() throws -> Bool
}
