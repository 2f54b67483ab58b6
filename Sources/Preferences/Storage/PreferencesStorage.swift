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
///   backend whose ``readsAreLocal`` is true, sometimes on the thread opening
///   or reloading the store while that queue is idle and held suspended.
///   Other code (a test, a tool holding ``PreferencesStore/storage``) may call
///   a backend from other threads at the same time; a backend is `Sendable`
///   and must stay consistent then.
/// - **Calls may block.** A network backend blocks until its server answers
///   or its own timeout passes; the store never calls a backend from Swift's
///   cooperative pool unless ``readsAreLocal`` says reads are quick.
/// - **Revisions never lie.** Two reads return equal revisions only if
///   nothing was written in between, and every successful write returns a
///   revision never returned before, even for identical bytes.
/// - **Errors.** I/O failures throw
///   ``PreferencesError/io(operation:path:code:message:)`` naming the
///   operation and ``location``; a document over ``maxDocumentSize`` is
///   refused with ``PreferencesError/limitExceeded(file:reason:)``. A lost
///   compare-and-swap is not an error: it returns nil.
/// - **Nothing destroyed.** A backend never discards a document's bytes
///   except by replacing them with a newer document through
///   ``write(_:ifRevision:)``; ``setAsideCorrupt(_:stamp:)`` keeps them.
///
/// Only the first six requirements have no default; the rest describe
/// what a backend can do beyond them (watch, publish a manifest, share
/// state, read cheaply) and default to "nothing special".
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
    /// on a conflict (see ``maxWriteAttempts``).
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T

    /// Moves the (corrupt) document aside, keeping its bytes, if the backend
    /// still holds `contents.revision`; returns where the bytes went (the
    /// file backend: `<file>.corrupt-<stamp>`, never replacing an earlier
    /// backup). nil, changing nothing, when someone wrote in between (the
    /// caller re-reads). After it, the backend holds nothing.
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String?

    /// An identity shared by every backend object that addresses the same
    /// data, or nil; stores whose backends share an identity share one
    /// in-memory state within the process (S9, <doc:StoreGuarantees>). The
    /// default is nil: every store is on its own.
    var identity: String? { get }

    /// Whether ``read()`` and ``currentRevision()`` are local and quick
    /// enough to run on a caller's thread, which saves an open two thread
    /// hops: true for a file or memory, false (the default) for anything
    /// that can wait on a network.
    var readsAreLocal: Bool { get }

    /// Called as a store begins opening on this backend; returns the
    /// ``identity`` for that open. A backend may resolve what it addresses
    /// once for the whole open here (the file backend resolves a symlink)
    /// until ``endOpening()``. The default returns ``identity``.
    func identityForOpening() -> String?

    /// Ends the open that ``identityForOpening()`` began. The default does
    /// nothing.
    func endOpening()

    /// Starts watching for writes made by others, reporting what the backend
    /// knows (see ``StorageWatchEvent``); events may be spurious and come
    /// from any thread, in order. nil (the default) when the backend cannot
    /// watch: the store then sees other writers' changes when it writes or
    /// reloads.
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?

    /// How many times the store tries a write that loses its compare-and-swap
    /// before giving up: 8 by default, which only an unlocked writer can
    /// exhaust; a backend without a lock, where every writer competes this
    /// way, asks for more.
    var maxWriteAttempts: Int { get }

    /// The largest document the backend accepts, in bytes, or nil (the
    /// default) for no limit of its own (the store's ``PreferencesLimits``
    /// still apply). A backend refuses a larger document in
    /// ``write(_:ifRevision:)`` with
    /// ``PreferencesError/limitExceeded(file:reason:)`` naming this limit,
    /// before sending anything.
    var maxDocumentSize: Int? { get }

    /// Makes every later write keep the document readable by its owner
    /// only, because it holds secrets (A3, <doc:ChangingSettingsSafely>);
    /// returns whether the stored document is readable by others now (the
    /// next write narrows it). The default does nothing and returns false:
    /// a backend without permissions of its own.
    func keepPrivate() throws -> Bool

    /// Where the backend keeps history entries older than those its
    /// document carries (<doc:HistoryAndUndo>), or nil (the default): then
    /// the document carries every entry kept. An archive spares every write
    /// the rewrite of the whole history.
    var historyArchive: (any HistoryArchive)? { get }

    /// Publishes the store's key manifest (7.6, <doc:CommandLineTool>) where
    /// `prefs` finds it, holding exclusive access, atomically and durably;
    /// rewrites it only when `bytes` differ from what is published. The
    /// default publishes nothing: a backend without a place for it.
    func publishManifest(_ bytes: [UInt8]) throws

    /// Publishes `bytes` as the manifest of `program` (F1,
    /// <doc:RollingOutAChange>), kept after the program exits, beside the
    /// store's own manifest of ``publishManifest(_:)``, and findable by its
    /// digest (``PreferencesManifest/digest``) for as long as it is kept.
    /// The default calls ``publishManifest(_:)``.
    func publishManifest(_ bytes: [UInt8], program: String) throws

    /// The manifest ``publishManifest(_:)`` published and where it was read
    /// from, for messages; nil (the default) when none is published. One
    /// too large to read is ``PreferencesError/invalidManifest(file:reason:)``.
    func publishedManifest() throws -> (bytes: [UInt8], location: String)?

    /// Every program's published manifest, by program name. The default:
    /// none.
    func publishedManifests() throws -> [String: [UInt8]]

    /// The manifest published with `digest`, or nil (the default) when
    /// there is none.
    func publishedManifest(digest: String) throws -> [UInt8]?

    /// Registers this process as a replica of the store while it is open
    /// (F2, <doc:RollingOutAChange>); the registration ends when closed or
    /// when the process dies. nil (the default): the backend cannot tell
    /// who uses it.
    func register(_ replica: PreferencesReplica) throws -> (any ReplicaRegistration)?

    /// The live replicas. The default: none known.
    func replicas() throws -> [PreferencesReplica]

    /// Calls `onChange` when a replica registers, reports a change, or goes
    /// away; nil (the default) when the backend cannot watch that, and a
    /// waiter looks again now and then instead.
    func watchReplicas(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)?
}

extension PreferencesStorage {
    /// No shared state.
    public var identity: String? { nil }

    /// Reads may wait (a network).
    public var readsAreLocal: Bool { false }

    /// ``identity``.
    public func identityForOpening() -> String? { identity }

    /// Nothing to end.
    public func endOpening() {}

    /// No watch.
    public func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    { nil }

    /// 8 attempts.
    public var maxWriteAttempts: Int { 8 }

    /// No limit of the backend's own.
    public var maxDocumentSize: Int? { nil }

    /// Publishes nothing.
    public func publishManifest(_ bytes: [UInt8]) throws {}

    /// No permissions of its own.
    public func keepPrivate() throws -> Bool { false }

    /// No archive: the document carries the history.
    public var historyArchive: (any HistoryArchive)? { nil }

    /// The store's one manifest.
    public func publishManifest(_ bytes: [UInt8], program: String) throws {
        try publishManifest(bytes)
    }

    /// None.
    public func publishedManifest() throws -> (bytes: [UInt8], location: String)? { nil }

    /// None.
    public func publishedManifests() throws -> [String: [UInt8]] { [:] }

    /// None.
    public func publishedManifest(digest: String) throws -> [UInt8]? { nil }

    /// No registration.
    public func register(_ replica: PreferencesReplica) throws -> (any ReplicaRegistration)? {
        nil
    }

    /// None known.
    public func replicas() throws -> [PreferencesReplica] { [] }

    /// No watch.
    public func watchReplicas(_ onChange: @escaping @Sendable () -> Void) throws
        -> (any StorageWatch)?
    { nil }
}
