import Dispatch
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The etcd backend: a store's document kept under one etcd v3 key, so a
/// fleet of replicas shares one set of settings (E1–E8, <doc:EtcdGuarantees>).
///
/// - **Layout** (E1, <doc:EtcdGuarantees>). The key holds exactly the bytes a
///   file store would hold (FileFormat in the Preferences documentation), so
///   `etcdctl get KEY` shows the document and a valid document put with
///   `etcdctl` is picked up like an editor's save.
/// - **Revisions.** A revision is the key's `mod_revision`; an absent key is
///   `StorageRevision.absent`.
/// - **Writes** (E2, <doc:EtcdGuarantees>). One transaction comparing
///   `mod_revision` (or `create_revision = 0` for a key that does not exist
///   yet), acknowledged once a quorum has it. There is no lock:
///   ``withExclusiveAccess(_:)`` runs its body as is, and a writer that loses
///   the compare re-reads and re-applies its edit (after a short random
///   pause, so competing replicas spread out), up to 200 times
///   (``tuning``).
/// - **Unknown outcomes** (E4, <doc:EtcdGuarantees>). Each write also stores
///   a random write id in the sibling key `KEY.last-write`, in the same
///   transaction. When a write was sent but no answer came (the member died,
///   the leader changed), the backend looks at the history before anything
///   else: the first change after the compared revision either carries this
///   write's id (it landed; the store is told so) or not (it did not; the
///   edit is re-applied on the newer state), so an edit is never applied
///   twice nor lost — even when another replica wrote the very same bytes.
///   (If that history is already compacted, the write fails with `.io`
///   instead.)
/// - **Corruption** (S8 in the Preferences documentation, StoreGuarantees). A
///   corrupt document is moved to the sibling key `KEY.corrupt-<stamp>` in
///   the same transaction that deletes `KEY`, and only if `KEY` still has the
///   revision that was found corrupt.
/// - **Watch** (E3, <doc:EtcdGuarantees>). One streaming watch per subscribed
///   store; see ``watch(_:)``. While it runs, ``currentRevision()``
///   answers from what the watch has seen, with no request.
/// - **Limits** (E6, <doc:EtcdGuarantees>). A document larger than the
///   cluster's request limit (``EtcdConfiguration/maxRequestBytes``, less
///   room for the request's framing) is refused before sending with
///   `PreferencesError.limitExceeded(file:reason:)`.
/// - **Threads.** Every method blocks its caller until etcd answers or the
///   timeout passes (see ``EtcdConfiguration/timeout``); the store calls it
///   on its own serial dispatch queue, never on Swift's cooperative pool.
///
/// ```swift
/// let cluster = try EtcdConfiguration(endpoints: "http://127.0.0.1:2379")
/// let store = try await PreferencesStore(
///     storage: EtcdStorage(configuration: cluster, key: "/prefs/com.example.app"))
/// ```
public final class EtcdStorage: PreferencesStorage {
    /// The etcd key that holds the document.
    public let key: String
    /// The cluster and credentials.
    public let configuration: EtcdConfiguration
    private let sharesState: Bool
    let client: EtcdClient
    private let known = Locked(Known())

    /// What this backend last learned about the key, from any source.
    private struct Known {
        /// The revision the knowledge is from (a `mod_revision`, or for an
        /// absent key the store revision it was seen absent at); -1 before anything.
        var number: Int64 = -1
        var revision = StorageRevision.absent
        /// Watches whose stream is established; with one, `revision` is current.
        var liveWatches = 0
        /// Compare-and-swap losses in a row, for the backoff.
        var conflicts = 0
        /// Watches started and not yet cancelled.
        var watches = 0
        /// Watches etcd cancelled because their revision was compacted.
        var compactions = 0
        /// The endpoint the last watch to start streaming is on.
        var watchEndpoint: URL?
    }

    /// Room left in a request for everything but the document (key, JSON, framing).
    static let requestOverhead = 4096

    /// A backend for `key` on the cluster described by `configuration`.
    ///
    /// - Parameters:
    ///   - configuration: the cluster's endpoints, credentials and limits.
    ///   - key: the etcd key that holds the document, such as
    ///     `/prefs/com.example.app`.
    ///   - sharesStateInProcess: when true (the default), stores opened on the
    ///     same endpoints and key in one process share one state (S9 in the
    ///     Preferences documentation, StoreGuarantees); false makes each store
    ///     a separate replica, as in another process (for benchmarks and
    ///     tests).
    /// - Throws: `PreferencesError.invalidKey(key:reason:)` for an empty
    ///   key, and `PreferencesError.invalidValue(key:reason:)` for an
    ///   `https` endpoint without ``EtcdConfiguration/tls``.
    public init(
        configuration: EtcdConfiguration, key: String, sharesStateInProcess: Bool = true
    ) throws {
        guard !key.isEmpty else {
            throw PreferencesError.invalidKey(key: key, reason: "an etcd key may not be empty")
        }
        self.key = key
        self.configuration = configuration
        self.sharesState = sharesStateInProcess
        client = try EtcdClient(configuration: configuration, subject: key)
    }

    /// The etcd key for a suite: `/prefs/NAME`.
    public static func key(forSuite suite: String) throws -> String {
        guard !suite.isEmpty, !suite.hasPrefix("."),
            suite.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        else { throw PreferencesError.invalidSuiteName(suite) }
        return "/prefs/" + suite
    }

    /// The key.
    public var location: String { key }

    /// `etcd:`, the endpoints (sorted) and the key: stores on the same
    /// cluster and key share one state in the process (S9 in the Preferences
    /// documentation, StoreGuarantees).
    public var identity: String? {
        guard sharesState else { return nil }
        let endpoints = configuration.endpoints.map { $0.absoluteString }.sorted()
        return "etcd:" + endpoints.joined(separator: ",") + "|" + key
    }

    /// An open with ``identity``.
    public func beginOpening() -> StorageOpening { StorageOpening(identity: identity) }

    /// Compare-and-swap losses are expected without a lock: up to 200 tries.
    /// A document may fill the cluster's request limit less room for the
    /// request's framing. Reads wait on the network.
    public var tuning: StorageTuning {
        StorageTuning(maxWriteAttempts: 200, maxDocumentSize: maxDocumentSize)
    }

    /// The cluster's request limit less room for the request's framing.
    var maxDocumentSize: Int { configuration.maxRequestBytes - Self.requestOverhead }

    /// None: etcd's permissions are the cluster's, not the document's.
    public var privacy: (any StoragePrivacy)? { nil }

    // MARK: Reading

    /// Reads the key (a linearizable read through the leader).
    public func read() throws -> StoredContents {
        try readWithHeader().contents
    }

    /// The contents and the store revision they were read at.
    func readWithHeader() throws -> (contents: StoredContents, header: Int64) {
        let reply = try client.call(
            "/v3/kv/range", ["key": EtcdClient.base64(key)], operation: "read", idempotent: true)
        let header = EtcdClient.headerRevision(reply)
        let contents = Self.contents(of: reply, header: header)
        learn(contents.revision, at: Self.number(contents.revision, header: header))
        return (contents, header)
    }

    /// The current revision: from a running watch when there is one,
    /// else from etcd (the key's metadata, not its value).
    public func currentRevision() throws -> StorageRevision {
        if let current = known.withLock({ $0.liveWatches > 0 && $0.number >= 0 ? $0.revision : nil }
        ) {
            return current
        }
        let reply = try client.call(
            "/v3/kv/range", ["key": EtcdClient.base64(key), "keys_only": true], operation: "read",
            idempotent: true)
        let header = EtcdClient.headerRevision(reply)
        let revision = Self.contents(of: reply, header: header).revision
        learn(revision, at: Self.number(revision, header: header))
        return revision
    }

    static func contents(of rangeReply: PreferenceValue, header: Int64) -> StoredContents {
        guard let kv = rangeReply["kvs"]?.arrayValue?.first else {
            return StoredContents(bytes: nil, revision: .absent)
        }
        return StoredContents(
            bytes: EtcdClient.bytes(kv["value"]),
            revision: StorageRevision(String(EtcdClient.int64(kv["mod_revision"]))))
    }

    static func number(_ revision: StorageRevision, header: Int64) -> Int64 {
        revision == .absent ? header : Int64(revision.token) ?? header
    }

    /// Records a revision of the key seen at store revision `number`; older news is ignored.
    func learn(_ revision: StorageRevision, at number: Int64) {
        known.withLock { known in
            if number >= known.number {
                known.number = number
                known.revision = revision
            }
        }
    }

    /// The number of watches started and not cancelled (for tests of
    /// subscription clean-up).
    public var activeWatchCount: Int { known.withLock { $0.watches } }

    func watchStarted(_ started: Bool) {
        known.withLock { $0.watches += started ? 1 : -1 }
    }

    /// How many times a watch resumed from a revision etcd had compacted
    /// away, and so read the key again (for tests of that path).
    var watchCompactions: Int { known.withLock { $0.compactions } }

    /// The endpoint of the watch that started streaming last (for tests).
    var currentWatchEndpoint: URL? { known.withLock { $0.watchEndpoint } }

    func watchMetCompaction() {
        known.withLock { $0.compactions += 1 }
    }

    func watchBecameLive(_ live: Bool, on endpoint: URL? = nil) {
        known.withLock { known in
            known.liveWatches += live ? 1 : -1
            if live { known.watchEndpoint = endpoint }
        }
    }

    // MARK: Writing

    /// Writes `bytes` in one transaction if the key's revision is still
    /// `expected`; nil (after a short random pause) when it is not.
    public func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        try write(bytes, ifRevision: expected, writeID: UUID().uuidString)
    }

    /// ``write(_:ifRevision:)`` with a given write id.
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision, writeID: String) throws
        -> StorageRevision?
    {
        if bytes.count > maxDocumentSize {
            throw PreferencesError.limitExceeded(
                file: key,
                reason:
                    "the document is \(bytes.count) bytes, over etcd's request limit of \(configuration.maxRequestBytes) bytes (\(Self.mebibytes(configuration.maxRequestBytes)) MiB, less \(Self.requestOverhead) bytes for the request)"
            )
        }
        let compare: PreferenceValue
        if expected == .absent {
            compare = [
                "key": EtcdClient.base64(key), "target": "CREATE", "result": "EQUAL",
                "create_revision": "0",
            ]
        } else if let number = Int64(expected.token) {
            compare = [
                "key": EtcdClient.base64(key), "target": "MOD", "result": "EQUAL",
                "mod_revision": .string(String(number)),
            ]
        } else {
            return nil
        }
        // The write's id goes to the sibling key in the same transaction, so
        // a write whose answer was lost can be told from another writer's
        // identical document (see `outcome(of:after:detail:)`).
        let body: PreferenceValue = [
            "compare": [compare],
            "success": [
                [
                    "request_put": [
                        "key": EtcdClient.base64(key), "value": EtcdClient.base64(bytes),
                    ]
                ],
                [
                    "request_put": [
                        "key": EtcdClient.base64(writeIDKey), "value": EtcdClient.base64(writeID),
                    ]
                ],
            ],
            "failure": [["request_range": ["key": EtcdClient.base64(key)]]],
        ]
        for _ in 0..<8 {
            let reply: PreferenceValue
            do {
                reply = try client.call("/v3/kv/txn", body, operation: "write", idempotent: false)
            } catch let unknown as EtcdClient.OutcomeUnknown {
                switch try outcome(of: writeID, after: expected, detail: unknown.detail) {
                case .landed(let revision):
                    known.withLock { $0.conflicts = 0 }
                    return revision
                case .superseded:
                    backOff()
                    return nil
                case .notApplied:
                    continue
                }
            }
            let header = EtcdClient.headerRevision(reply)
            if reply["succeeded"] == true {
                let revision = StorageRevision(String(header))
                learn(revision, at: header)
                known.withLock { $0.conflicts = 0 }
                return revision
            }
            // The failure branch read the key: remember what is there now.
            if let range = reply["responses"]?.arrayValue?.first?["response_range"] {
                let now = Self.contents(of: range, header: header).revision
                learn(now, at: Self.number(now, header: header))
            }
            backOff()
            return nil
        }
        throw PreferencesError.io(
            operation: "write", path: key, code: EIO,
            message: "etcd kept failing to answer the write (\(configuration.endpointList))")
    }

    /// A short random pause after a lost compare-and-swap, growing with
    /// each loss in a row, so competing writers stop colliding.
    private func backOff() {
        let conflicts = known.withLock { known in
            known.conflicts += 1
            return known.conflicts
        }
        let ceiling = min(1 << min(conflicts, 5), 32)
        sleepThread(seconds: Double.random(in: 0...Double(ceiling)) / 1000)
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(cFormat: "%g", Double(bytes) / 1_048_576)
    }

    enum Outcome {
        /// The write is in the history at this revision.
        case landed(StorageRevision)
        /// Someone else changed the key first; the write was not applied.
        case superseded
        /// Nothing changed the key: the write was not applied and can be sent again.
        case notApplied
    }

    /// Finds out whether the write `writeID` comparing `expected`, whose
    /// answer was lost, was applied. A compare-and-swap write can only be
    /// the first change to the key after `expected`; it was applied iff
    /// that change also stored `writeID` in the sibling key.
    func outcome(of writeID: String, after expected: StorageRevision, detail: String) throws
        -> Outcome
    {
        let (now, header) = try readWithHeader()
        if now.revision == expected { return .notApplied }
        let first: Int64
        if expected == .absent {
            // Created since: the creating put is the first change.
            guard now.bytes != nil else { return .notApplied }
            first = try createRevision()
        } else {
            guard let base = Int64(expected.token) else { return .superseded }
            // The smallest store revision at which the key no longer has `expected`.
            var low = base + 1
            var high = header
            while low < high {
                let middle = low + (high - low) / 2
                let seen = try read(key, atRevision: middle, detail: detail)
                if seen?.revision == expected { low = middle + 1 } else { high = middle }
            }
            first = low
        }
        guard let id = try read(writeIDKey, atRevision: first, detail: detail),
            id.revision == StorageRevision(String(first)), id.bytes == Array(writeID.utf8)
        else { return .superseded }
        return .landed(StorageRevision(String(first)))
    }

    /// The sibling key that holds the id of the last write made through
    /// this library (`KEY.last-write`).
    var writeIDKey: String { key + ".last-write" }

    private func createRevision() throws -> Int64 {
        let reply = try client.call(
            "/v3/kv/range", ["key": EtcdClient.base64(key), "keys_only": true], operation: "read",
            idempotent: true)
        return EtcdClient.int64(reply["kvs"]?.arrayValue?.first?["create_revision"])
    }

    /// A key as it was at store revision `revision`.
    private func read(_ key: String, atRevision revision: Int64, detail: String) throws
        -> StoredContents?
    {
        let reply: PreferenceValue
        do {
            reply = try client.call(
                "/v3/kv/range",
                ["key": EtcdClient.base64(key), "revision": .string(String(revision))],
                operation: "read", idempotent: true)
        } catch PreferencesError.io(let operation, let path, let code, let message)
            where message.contains("compacted")
        {
            throw PreferencesError.io(
                operation: operation, path: path, code: code,
                message:
                    "a write's answer was lost (\(detail)) and the history that would tell whether it landed is compacted; read the key and try again"
            )
        }
        let contents = Self.contents(of: reply, header: EtcdClient.headerRevision(reply))
        return contents.bytes == nil ? nil : contents
    }

    /// Runs `body`: etcd writes are compare-and-swap, with no lock to take.
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try body()
    }

    // MARK: Corruption

    /// In one transaction, if the key still has `contents.revision`: puts
    /// the bytes under `KEY.corrupt-<stamp>` (with a counter when that name
    /// is taken) and deletes the key. nil when the key changed.
    public func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        guard let bytes = contents.bytes, let number = Int64(contents.revision.token) else {
            return nil
        }
        for attempt in 1...100 {
            let place = key + ".corrupt-" + stamp + (attempt == 1 ? "" : "-\(attempt)")
            let body: PreferenceValue = [
                "compare": [
                    [
                        "key": EtcdClient.base64(key), "target": "MOD", "result": "EQUAL",
                        "mod_revision": .string(String(number)),
                    ],
                    [
                        "key": EtcdClient.base64(place), "target": "CREATE", "result": "EQUAL",
                        "create_revision": "0",
                    ],
                ],
                "success": [
                    [
                        "request_put": [
                            "key": EtcdClient.base64(place), "value": EtcdClient.base64(bytes),
                        ]
                    ],
                    ["request_delete_range": ["key": EtcdClient.base64(key)]],
                ],
            ]
            let reply: PreferenceValue
            do {
                reply = try client.call(
                    "/v3/kv/txn", body, operation: "set aside", idempotent: false)
            } catch is EtcdClient.OutcomeUnknown {
                // Landed iff the key is gone and the backup holds these bytes.
                if try read().revision == contents.revision { continue }
                let backup = try client.call(
                    "/v3/kv/range", ["key": EtcdClient.base64(place)], operation: "read",
                    idempotent: true)
                let saved = Self.contents(of: backup, header: 0)
                return saved.bytes == bytes ? place : nil
            }
            if reply["succeeded"] == true { return place }
            // Either the key moved on (give up) or the backup name is taken (next name).
            if try read().revision != contents.revision { return nil }
        }
        throw PreferencesError.io(
            operation: "set aside", path: key, code: EEXIST,
            message: "100 backups named \(key).corrupt-\(stamp)… exist already")
    }

    // MARK: Watching

    /// Streams the key's changes from etcd's watch API.
    ///
    /// The watch first reads the key (reporting it as `.changed`), then
    /// watches from that read's revision + 1, so no change between the two
    /// is missed. Each change arrives with its document and revision. When
    /// the connection drops (a member going down), it resumes from the
    /// revision after the last it saw on the endpoint that answered most
    /// recently; when etcd has compacted that revision away, or cancels the
    /// watch, it reads again and watches from there. A member that stops
    /// answering, and a stream that stops delivering while the key moves
    /// on, are found by a check every
    /// ``EtcdConfiguration/watchCheckInterval`` while the stream is quiet.
    /// It tries the endpoints in turn with a growing pause (up to 1 s);
    /// when none has taken the watch for ``EtcdConfiguration/timeout``, it
    /// reports `.interrupted` once.
    public func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        let stream = EtcdWatchStream(storage: self, onEvent: onEvent)
        stream.start()
        return stream
    }
}
