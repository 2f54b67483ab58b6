import Preferences
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The contract every `PreferencesStorage` backend keeps, as
/// one call a backend's tests make.
///
/// The store relies on a small set of promises from its backend:
/// compare-and-swap that refuses a stale revision, revisions that move with
/// every write, corrupt documents set aside and never destroyed, a watch
/// that reports other writers and stops when cancelled, limits refused
/// before anything is sent. `StorageContract` checks each of them against
/// the backend directly; then the rules of each capability the backend
/// offers — an archive that keeps what was appended, in order, within its
/// limit; manifests read back whole, by program and by digest;
/// registrations listed, updated and gone once closed; a document kept
/// private — and then the store's own rules that depend on them — reads
/// after writes, exact increments from two writers, the corruption policy,
/// the change feed, records keeping unknown keys, migrations running once —
/// through `PreferencesStore` opened on the backend.
///
/// Each check gets a fresh ``Subject`` from your factory, in a fresh
/// temporary directory that is removed afterwards. Failures are recorded
/// as Swift Testing issues that name the check and the rule, so one run
/// shows every way a backend falls short:
///
/// ```swift
/// import PreferencesTesting
/// import Testing
///
/// @Test func myBackendKeepsTheStorageContract() async throws {
///     try await StorageContract { directory in
///         let backend = MyStorage(root: directory)
///         return StorageContract.Subject(
///             storage: backend, otherHandle: MyStorage(root: directory),
///             readSetAside: { place in try MyStorage.bytes(at: place) },
///             offering: [.historyArchive])
///     }.run()
/// }
/// ```
///
/// Every wait has a deadline: a backend call that blocks longer than
/// ``callTimeout`` fails its check with what it was doing, rather than
/// hanging the test run. Backend calls run on threads of their own, never
/// on Swift's cooperative pool, since a backend may block on a network.
public struct StorageContract: Sendable {
    /// A backend to check, with what the checks need around it.
    public struct Subject: Sendable {
        /// The backend under test, holding nothing yet.
        public var storage: any PreferencesStorage
        /// A second backend object on the same data, made as another
        /// process would make it (for a backend that shares state within a
        /// process, `storage` itself is fine).
        public var otherHandle: any PreferencesStorage
        /// The bytes that `PreferencesStorage/setAsideCorrupt(_:stamp:)`
        /// moved to `place` (the name it returned), or nil when nothing is
        /// there.
        public var readSetAside: @Sendable (_ place: String) throws -> [UInt8]?
        /// Whether the backend watches for other writers; when false, the
        /// checks that need a watch are left out (and
        /// `PreferencesStorage/watch(_:)` must return nil).
        public var watches: Bool
        /// For a backend with `PreferencesStorage/privacy`: makes the
        /// stored document readable by others, as a careless `chmod 644`
        /// would, so the checks see it narrowed again. nil leaves those
        /// parts out.
        public var makeReadableByOthers: (@Sendable () throws -> Void)?
        /// The capabilities the backend offers: the contract fails when one
        /// declared here is missing, and when one offered is not declared.
        public var capabilities: Capabilities

        /// A subject; `watches` defaults to true. `capabilities` says what
        /// the backend offers beyond the document (none by default).
        public init(
            storage: any PreferencesStorage, otherHandle: any PreferencesStorage,
            readSetAside: @escaping @Sendable (_ place: String) throws -> [UInt8]?,
            offering capabilities: Capabilities = [], watches: Bool = true,
            makeReadableByOthers: (@Sendable () throws -> Void)? = nil
        ) {
            self.storage = storage
            self.otherHandle = otherHandle
            self.readSetAside = readSetAside
            self.capabilities = capabilities
            self.watches = watches
            self.makeReadableByOthers = makeReadableByOthers
        }
    }

    /// What a backend offers beyond the document, each held to its rules:
    /// `PreferencesStorage/historyArchive`, `manifests`, `replicas` and
    /// `privacy`.
    public struct Capabilities: OptionSet, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let historyArchive = Capabilities(rawValue: 1 << 0)
        public static let manifests = Capabilities(rawValue: 1 << 1)
        public static let replicas = Capabilities(rawValue: 1 << 2)
        public static let privacy = Capabilities(rawValue: 1 << 3)
        /// All four, as the file backend offers them.
        public static let all: Capabilities = [.historyArchive, .manifests, .replicas, .privacy]

        /// What `storage` offers.
        public init(of storage: any PreferencesStorage) {
            self = []
            if storage.historyArchive != nil { insert(.historyArchive) }
            if storage.manifests != nil { insert(.manifests) }
            if storage.replicas != nil { insert(.replicas) }
            if storage.privacy != nil { insert(.privacy) }
        }

        public var description: String {
            let names: [(Capabilities, String)] = [
                (.historyArchive, "historyArchive"), (.manifests, "manifests"),
                (.replicas, "replicas"), (.privacy, "privacy"),
            ]
            let listed = names.filter { contains($0.0) }.map(\.1)
            return listed.isEmpty ? "none" : listed.joined(separator: ", ")
        }
    }

    /// Makes a fresh subject; `directory` is an empty temporary directory
    /// the subject may use, removed after the check.
    public typealias Factory = @Sendable (_ directory: URL) async throws -> Subject

    /// One promise the contract checks.
    public struct Check: Sendable, CustomStringConvertible {
        /// The rule it checks and a short description, for messages.
        public let description: String
        let run: @Sendable (Subject, StorageContract) async throws -> Void
    }

    let makeSubject: Factory
    /// How long one backend call may take before its check fails: 30 s.
    public var callTimeout: Duration = .seconds(30)
    /// How long a check waits for something to happen (a watch event, a
    /// change feed's value): 20 s.
    public var eventTimeout: Duration = .seconds(20)

    /// A contract run against the backends `makeSubject` makes.
    public init(_ makeSubject: @escaping Factory) {
        self.makeSubject = makeSubject
    }

    /// Every check, in the order ``run()`` runs them.
    public static var checks: [Check] { backendChecks + capabilityChecks + storeChecks }

    /// Runs every check, each on a fresh subject, recording a Swift Testing
    /// issue for each broken promise. Throws only when a subject cannot be
    /// made at all.
    public func run() async throws {
        for check in Self.checks {
            try await run(check)
        }
    }

    /// Runs one check on a fresh subject.
    public func run(_ check: Check) async throws {
        let directory = try TemporaryDirectory()
        // Removed when the check is over, not after its last use here.
        defer { withExtendedLifetime(directory) {} }
        let subject = try await makeSubject(directory.url)
        do {
            try await check.run(subject, self)
        } catch {
            Issue.record("\(check): \(error)")
        }
    }

    // MARK: Helpers for the checks

    /// Runs a backend call on a thread of its own, failing after ``callTimeout``.
    func call<Value: Sendable>(
        _ what: String, _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await onOwnThread(what, timeout: callTimeout, body)
    }

    /// Awaits `body`, failing after ``eventTimeout``.
    func waitFor<Value: Sendable>(
        _ what: String, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withDeadline(what, timeout: eventTimeout, body)
    }
}

extension StorageContract.Check {
    init(
        _ description: String,
        _ run: @escaping @Sendable (StorageContract.Subject, StorageContract) async throws -> Void
    ) {
        self.description = description
        self.run = run
    }
}
