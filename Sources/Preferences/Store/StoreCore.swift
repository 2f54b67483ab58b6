import Dispatch
import Foundation
import Synchronization

/// The shared state behind every ``PreferencesStore`` handle on one file
/// (SPEC S9): the in-memory snapshot that reads use, the queue of pending
/// edits, and the subscribers of the change feed.
///
/// All storage I/O runs one piece at a time, in the order it was asked for,
/// on one serial dispatch queue per store, which targets the queue all
/// stores share (``SharedWork``) — except that a quick read (opening, a
/// reload) asked for while the queue has nothing queued or running runs on
/// the caller's thread with the queue suspended (``runInline(_:)``), which
/// saves two thread hops and keeps the order just the same. Edits waiting
/// while a write is in flight are applied together in the next write (group
/// commit, S4), and edits queued while a write is being prepared join it
/// (``commit(_:takingLateEdits:)``); each caller still receives its own
/// result or error.
///
/// The storage is watched while a handle with live reads is open (S16) or a
/// change feed is active (C5); the watch holds the core weakly, so it ends
/// when the last handle goes.
@usableFromInline
final class StoreCore: Sendable {
    let storage: any PreferencesStorage
    let limits: PreferencesLimits
    let corruption: CorruptionPolicy
    let queue = DispatchQueue(label: "preferences.store", target: SharedWork.queue)

    /// An edit waiting for a write. Its transform's result travels back as
    /// `any Sendable`, so an edit costs no box of its own (`()` for `set`).
    struct PendingEdit: Sendable {
        let id: UInt64
        let apply: @Sendable (inout MutablePreferences) throws -> any Sendable
        let continuation: UnsafeContinuation<any Sendable, any Error>

        func complete(_ outcome: Result<any Sendable, any Error>) {
            continuation.resume(with: outcome)
        }
    }

    struct Subscriber: Sendable {
        let deliver: @Sendable (PreferencesSnapshot, UInt64) -> Void
    }

    struct State: Sendable {
        var snapshot = PreferencesSnapshot()
        var revision = StorageRevision.absent
        var generation: UInt64 = 0
        var loaded = false
        var pending: [PendingEdit] = []
        var draining = false
        var nextID: UInt64 = 0
        var subscribers: [UInt64: Subscriber] = [:]
        var watch: (any StorageWatch)?
        /// Open handles with live reads on (S16).
        var liveReaders = 0
        var mismatches: [String: PreferencesProblem] = [:]
        var fileProblems: [PreferencesProblem] = []
        /// Where the corruption policy moved a bad document. Listed for as
        /// long as the store stays open, whatever is read later: the moved
        /// bytes wait for someone to look at them.
        var recoveryProblems: [PreferencesProblem] = []
        /// Set while the backend reports its watch interrupted.
        var watchProblem: PreferencesProblem?
        var migrationProblems: [PreferencesProblem] = []
        /// Notes left by committed edits (``MutablePreferences/report(_:key:)``),
        /// the latest ``maxEditReports``.
        var editReports: [PreferencesProblem] = []
        /// The keys declared by this process's handles, and why publishing them failed.
        var declared = PreferencesManifest()
        var manifestProblems: [PreferencesProblem] = []
        var problemWatchers: [UInt64: @Sendable ([PreferencesProblem], UInt64) -> Void] = [:]
        var problemSequence: UInt64 = 0
        var notifiedProblems: [PreferencesProblem]?

        var problems: [PreferencesProblem] {
            recoveryProblems + fileProblems + (watchProblem.map { [$0] } ?? []) + migrationProblems
                + editReports + manifestProblems
                + mismatches.keys.sorted().compactMap { mismatches[$0] }
        }

        /// Whether someone needs the storage watched.
        var wantsWatch: Bool { liveReaders > 0 || !subscribers.isEmpty }
        /// Failed reloads in a row after the watcher signalled a change, and
        /// whether a retry is scheduled.
        var watcherRetries = 0
        var watcherRetryPending = false
        /// Work submitted to the queue and not finished yet, plus one while
        /// work runs on a caller's thread (``runInline(_:)``).
        var outstanding = 0

        /// Takes every queued edit, in the order queued.
        mutating func takePending() -> [PendingEdit] {
            if pending.isEmpty { return [] }
            defer { pending.removeAll() }
            return pending
        }
    }

    let state = Locked(State())
    /// The order the last write's keys were sorted into, for the next
    /// write, which usually has the same keys (``StoreDocument/encode(file:limits:reusingKeyOrder:)``).
    private let lastKeyOrder = Locked<[Int]?>(nil)
    /// Numbers the edits (for cancellation) without taking the state's lock.
    private let editIDs = Atomic<UInt64>(0)

    init(storage: any PreferencesStorage, limits: PreferencesLimits, corruption: CorruptionPolicy) {
        self.storage = storage
        self.limits = limits
        self.corruption = corruption
    }

    deinit {
        state.withLock { $0.watch }?.cancel()
    }

    var snapshot: PreferencesSnapshot { state.withLock { $0.snapshot } }

    /// One stored value, without copying the snapshot (the read fast path).
    @usableFromInline
    func storedValue(_ name: String) -> PreferenceValue? {
        state.withLock { $0.snapshot.values[name] }
    }

    // MARK: Opening

    /// Loads the file — or, for a further handle on a file already open in
    /// this process, re-reads it if it changed — applying the opener's
    /// corruption policy, then runs `migrations`; on the store's queue.
    ///
    /// With `liveReads`, the storage is watched from before the load, so no
    /// write after it is missed, until the returned reader is released.
    func open(
        migrations: [any PreferencesMigration], corruption: CorruptionPolicy, liveReads: Bool
    ) async throws -> LiveReader? {
        let reader = liveReads ? LiveReader(self) : nil
        // The usual open — no migrations, a backend whose reads are local and
        // quick, a valid file — needs no hop to the queue.
        if migrations.isEmpty && storage.readsAreLocal {
            let opened = runInline { () -> Bool? in
                do {
                    try self.load(policy: corruption, recovering: false)
                } catch let error as PreferencesError {
                    // A corrupt file under a policy that moves it takes the
                    // lock, which may wait: that is the queue's work.
                    if case .corrupted = error, !corruption.failsOnly { return false }
                    throw error
                }
                return true
            }
            switch opened {
            case .success(true)?:
                notifyProblemWatchers()
                return reader
            case .failure(let error)?:
                notifyProblemWatchers()
                throw error
            default:
                break
            }
        }
        return try await onQueue {
            defer { self.notifyProblemWatchers() }
            try self.load(policy: corruption)
            if !migrations.isEmpty { try self.migrate(migrations) }
            return reader
        }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs `work` on the store's queue after everything submitted before it.
    func submit(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.outstanding += 1 }
        queue.async {
            work()
            self.state.withLock { $0.outstanding -= 1 }
        }
    }

    /// Runs `work` on the store's queue after `delay`. It counts as
    /// outstanding from now, so no work runs on a caller's thread meanwhile.
    private func submit(after delay: Double, _ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.outstanding += 1 }
        queue.asyncAfter(deadline: .now() + delay) {
            work()
            self.state.withLock { $0.outstanding -= 1 }
        }
    }

    /// Runs `work` on the caller's thread when the queue has nothing queued
    /// or running, holding the queue suspended meanwhile, so whatever is
    /// submitted during it runs after it, as if `work` had been queued
    /// first. nil, running nothing, when the queue is busy.
    private func runInline<T>(_ work: () throws -> T) -> Result<T, any Error>? {
        let idle = state.withLock { state in
            guard state.outstanding == 0 else { return false }
            state.outstanding = 1
            // Suspended under the lock: nothing submitted from now on can
            // start before `work` ends.
            queue.suspend()
            return true
        }
        guard idle else { return nil }
        defer {
            state.withLock { $0.outstanding -= 1 }
            queue.resume()
        }
        return Result { try work() }
    }

    /// Without `recovering`, a corrupt file throws whatever the policy:
    /// the caller applies it later, on the queue.
    private func load(policy: CorruptionPolicy, recovering: Bool = true) throws {
        let (loaded, known) = state.withLock { ($0.loaded, $0.revision) }
        if loaded, try storage.currentRevision() == known { return }
        let contents = try storage.read()
        let document: StoreDocument
        var revision = contents.revision
        do {
            document = try decode(contents)
        } catch let error as PreferencesError {
            // With `.fail` nothing is touched, not even the lock file.
            guard case .corrupted = error else { throw error }
            if case .fail = policy.action { throw error }
            if !recovering { throw error }
            (document, revision) = try storage.withExclusiveAccess {
                // A backend without a lock may see the document change under
                // the recovery (which then changes nothing): read again.
                for _ in 0..<storage.maxWriteAttempts {
                    // Someone may have repaired or replaced the file meanwhile.
                    let again = try storage.read()
                    let failure: PreferencesError
                    do {
                        return (try decode(again), again.revision)
                    } catch let error as PreferencesError {
                        guard case .corrupted = error else { throw error }
                        failure = error
                    }
                    if let recovered = try recover(from: failure, contents: again, policy: policy) {
                        return recovered
                    }
                }
                throw PreferencesError.io(
                    operation: "recover", path: storage.location, code: 0,
                    message: "the document kept changing during the recovery; open again")
            }
        }
        publish(document, revision: revision)
        state.withLock { $0.loaded = true }
    }

    private func decode(_ contents: StoredContents) throws -> StoreDocument {
        guard let bytes = contents.bytes else { return StoreDocument() }
        return try StoreDocument.decode(bytes, file: storage.location, limits: limits)
    }

    /// Applies a corruption policy to the corrupt `contents`; called holding
    /// exclusive access. nil when the document changed meanwhile (a backend
    /// without a lock): nothing was moved, and the caller reads again.
    private func recover(
        from error: PreferencesError, contents: StoredContents, policy: CorruptionPolicy
    ) throws -> (StoreDocument, StorageRevision)? {
        let replacement: [String: PreferenceValue]
        switch policy.action {
        case .fail:
            throw error
        case .backupAndReset:
            replacement = [:]
        case .replace(let makeValues):
            replacement = makeValues(error)
        }
        // Check the replacement before moving anything: a replacement the next
        // open would reject must not cost the bad file its place.
        for key in replacement.keys {
            if let problem = limits.problem(withKey: key) {
                throw PreferencesError.invalidKey(
                    key: key, reason: "in the replacement values: \(problem)")
            }
        }
        let document = StoreDocument(values: replacement)
        let replacementBytes =
            replacement.isEmpty ? nil : try document.encode(file: storage.location, limits: limits)
        guard let place = try storage.setAsideCorrupt(contents, stamp: Self.timestamp()) else {
            return nil
        }
        state.withLock {
            $0.recoveryProblems.append(
                PreferencesProblem(
                    key: nil, message: "\(error.description); the file was moved to \(place)"))
        }
        guard let bytes = replacementBytes else { return (document, .absent) }
        // Someone wrote after the bad bytes were moved aside: theirs stands.
        guard let written = try storage.write(bytes, ifRevision: .absent) else { return nil }
        return (document, written)
    }

    static func timestamp() -> String {
        let date = ISO8601.format(
            Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        return date.filter { $0 != "-" && $0 != ":" }
    }

    // MARK: Reloading

    /// Re-reads the storage if its revision moved; called on the queue.
    /// With a `policy`, a corrupt file goes through it (the caller holds
    /// exclusive access); without, it is reported and the last good state
    /// kept (C6).
    private func refreshIfChanged(policy: CorruptionPolicy?) throws {
        let known = state.withLock { $0.revision }
        guard try storage.currentRevision() != known else { return }
        try apply(try storage.read(), policy: policy)
    }

    /// Publishes read `contents`, or applies `policy` (or C6) when they are corrupt.
    private func apply(_ contents: StoredContents, policy: CorruptionPolicy?) throws {
        do {
            let document = try decode(contents)
            state.withLock { $0.fileProblems = [] }
            publish(document, revision: contents.revision)
        } catch let error as PreferencesError {
            guard case .corrupted = error else { throw error }
            if let policy {
                guard
                    let (document, revision) = try recover(
                        from: error, contents: contents, policy: policy)
                else {
                    // Changed under the recovery: take whatever is there now.
                    return try refreshIfChanged(policy: policy)
                }
                publish(document, revision: revision)
            } else {
                state.withLock {
                    $0.fileProblems = [
                        PreferencesProblem(
                            key: nil, message: "\(error.description); keeping the last good values")
                    ]
                }
                throw error
            }
        }
    }

    /// How long a write waits, in total, for a file that turned corrupt
    /// after it was loaded to become valid again: the pauses between the
    /// write's re-reads (10, 20, 40 and 80 ms, five reads over about 150 ms).
    static let corruptRereadPauses: [TimeInterval] = [0.010, 0.020, 0.040, 0.080]

    /// The re-read before a write, holding exclusive access (S17).
    ///
    /// A file that is corrupt now but was valid when loaded is most likely
    /// being saved in place by a program that ignores the lock (an editor
    /// half-way through its write), so the corruption policy — which only
    /// runs when a store is opened — does not apply: the re-read is retried
    /// a few times (``corruptRereadPauses``), then the write fails with
    /// ``PreferencesError/corrupted(file:reason:)``, leaving the file's
    /// bytes as they are and the last good state in memory. The pauses block
    /// the store's own dispatch queue, never the calling task.
    private func refreshBeforeWrite() throws {
        var pauses = Self.corruptRereadPauses[...]
        while true {
            do {
                try refreshIfChanged(policy: nil)
                // A problem reported by an earlier attempt is gone now.
                if pauses.count < Self.corruptRereadPauses.count { notifyProblemWatchers() }
                return
            } catch let error as PreferencesError {
                guard case .corrupted = error else { throw error }
                notifyProblemWatchers()
                guard let pause = pauses.popFirst() else { throw error }
                Thread.sleep(forTimeInterval: pause)
            }
        }
    }

    /// Re-reads after a change signalled by the watcher. Errors are kept as
    /// problems; the feed and the last good state stay. A reload that failed
    /// on an I/O error (a file briefly unreadable, a cluster without a
    /// leader) is tried again, after a pause growing from 50 ms to 2 s, for
    /// as long as the store is watched: the last change before a quiet spell
    /// is never left unread.
    func reloadFromWatcher(_ watched: StoredContents? = nil) {
        defer { notifyProblemWatchers() }
        do {
            state.withLock { $0.watchProblem = nil }
            // The watch's contents are used only while they are the newest
            // the backend knows; an older event (overtaken by our own write)
            // must not roll the state back, so then read.
            if let watched, try storage.currentRevision() == watched.revision {
                if watched.revision != state.withLock({ $0.revision }) {
                    try apply(watched, policy: nil)
                }
            } else {
                try refreshIfChanged(policy: nil)
            }
            state.withLock { $0.watcherRetries = 0 }
        } catch let error as PreferencesError {
            if case .corrupted = error { return }
            state.withLock {
                $0.fileProblems = [PreferencesProblem(key: nil, message: error.description)]
            }
            retryReloadLater()
        } catch {
            retryReloadLater()
        }
    }

    private func retryReloadLater() {
        let attempt = state.withLock { state -> Int? in
            guard state.wantsWatch, !state.watcherRetryPending else { return nil }
            state.watcherRetryPending = true
            state.watcherRetries += 1
            return state.watcherRetries
        }
        guard let attempt else { return }
        let pause = min(0.05 * Double(1 << min(attempt - 1, 6)), 2.0)
        submit(after: pause) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.watcherRetryPending = false }
            self.reloadFromWatcher()
        }
    }

    /// Re-reads the storage now (for callers without a change feed).
    func reload() async throws {
        try await onQueue {
            defer { self.notifyProblemWatchers() }
            try self.refreshIfChanged(policy: nil)
        }
    }

    // MARK: Publishing

    /// Makes `document` the current state and tells subscribers, unless it
    /// equals the current state (an unchanged rewrite delivers nothing).
    ///
    /// Comparing two states is O(n), so it runs outside the state lock that
    /// every read takes: against the state as of a generation, which is then
    /// replaced under the lock only if the generation has not moved meanwhile
    /// (else compared again). Called on the queue.
    private func publish(
        _ document: StoreDocument, revision: StorageRevision, knownChanged: Bool = false
    ) {
        while !knownChanged {
            let (current, generation) = state.withLock { ($0.snapshot, $0.generation) }
            guard document.version == current.version && document.values == current.values
            else { break }
            let unchanged = state.withLock { state in
                guard state.generation == generation else { return false }
                state.revision = revision
                // Change records and unknown members are kept even when no
                // value changed, so the next write carries them over; only a
                // value or version change is news for subscribers.
                state.snapshot = PreferencesSnapshot(
                    document, registeredDefaults: state.snapshot.registeredDefaults)
                return true
            }
            if unchanged { return }
        }
        let (snapshot, generation, subscribers, replaced) = state.withLock { state in
            state.revision = revision
            let old = state.snapshot
            state.snapshot = PreferencesSnapshot(
                document, registeredDefaults: old.registeredDefaults)
            state.generation += 1
            state.mismatches = state.mismatches.filter { key, _ in
                old.values[key] == document.values[key]
            }
            return (state.snapshot, state.generation, Array(state.subscribers.values), old)
        }
        // The replaced values are freed here, outside the lock (also O(n)).
        withExtendedLifetime(replaced) {}
        for subscriber in subscribers { subscriber.deliver(snapshot, generation) }
        notifyProblemWatchers()
    }

    func register(defaults: [String: PreferenceValue]) {
        let delivery = state.withLock { state in
            var merged = state.snapshot.registeredDefaults
            merged.merge(defaults) { _, new in new }
            state.snapshot = state.snapshot.registering(merged)
            state.generation += 1
            return (state.snapshot, state.generation, Array(state.subscribers.values))
        }
        for subscriber in delivery.2 { subscriber.deliver(delivery.0, delivery.1) }
    }

    // MARK: Problems

    func reportMismatch(key: String, error: PreferencesError) {
        state.withLock { state in
            state.mismatches[key] = PreferencesProblem(key: key, message: error.description)
        }
        notifyProblemWatchers()
    }

    var problems: [PreferencesProblem] {
        state.withLock { $0.problems }
    }

    /// Tells problem watchers about the current problems if they changed
    /// since the last notice. Cheap when nobody watches.
    func notifyProblemWatchers() {
        let delivery = state.withLock {
            state -> (
                [PreferencesProblem], UInt64, [@Sendable ([PreferencesProblem], UInt64) -> Void]
            )? in
            guard !state.problemWatchers.isEmpty else { return nil }
            let current = state.problems
            if state.notifiedProblems == current { return nil }
            state.notifiedProblems = current
            state.problemSequence += 1
            return (current, state.problemSequence, Array(state.problemWatchers.values))
        }
        guard let (problems, sequence, watchers) = delivery else { return }
        for watcher in watchers { watcher(problems, sequence) }
    }

    /// Registers a problem watcher; it receives the current problems at once.
    /// Each delivery carries a sequence number so late ones can be ignored.
    func watchProblems(
        _ deliver: @escaping @Sendable ([PreferencesProblem], UInt64) -> Void
    ) -> UInt64 {
        let (id, current, sequence) = state.withLock { state in
            state.nextID += 1
            state.problemWatchers[state.nextID] = deliver
            return (state.nextID, state.problems, state.problemSequence)
        }
        deliver(current, sequence)
        return id
    }

    func stopWatchingProblems(_ id: UInt64) {
        state.withLock { state in
            state.problemWatchers[id] = nil
            if state.problemWatchers.isEmpty { state.notifiedProblems = nil }
        }
    }

    // MARK: Editing

    /// Applies `apply` in the next write and returns its result once that
    /// write is durable.
    func edit<Value: Sendable>(
        _ apply: @escaping @Sendable (inout MutablePreferences) throws -> Value
    ) async throws -> Value {
        let id = editIDs.wrappingAdd(1, ordering: .relaxed).newValue
        let result = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation {
                (continuation: UnsafeContinuation<any Sendable, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                enqueue(PendingEdit(id: id, apply: apply, continuation: continuation))
                // Cancelled between the check above and the queueing, the
                // handler found nothing to drop.
                if Task.isCancelled { dropPending(id) }
            }
        } onCancel: {
            dropPending(id)
        }
        // A `Void` result (`set`, `remove`, `clear`, most edits) needs no
        // cast: `()` is the only value there is.
        if Value.self == Void.self { return unsafeBitCast((), to: Value.self) }
        // `apply` returned a `Value`, boxed as `any Sendable` on the way.
        guard let value = result as? Value else { throw CancellationError() }
        return value
    }

    /// Fails the edit numbered `id` with `CancellationError` if no write
    /// has picked it up yet; one already in a write completes normally.
    private func dropPending(_ id: UInt64) {
        let dropped = state.withLock { state -> PendingEdit? in
            guard let index = state.pending.firstIndex(where: { $0.id == id }) else { return nil }
            return state.pending.remove(at: index)
        }
        dropped?.complete(.failure(CancellationError()))
    }

    /// Queues `edit` for the next write, and starts the writes if none is
    /// under way.
    func enqueue(_ edit: PendingEdit) {
        let startDrain = state.withLock { state in
            state.pending.append(edit)
            defer { state.draining = true }
            return !state.draining
        }
        if startDrain { submit { self.drain() } }
    }

    private func drain() {
        while true {
            var batch = state.withLock { state in
                let taken = state.takePending()
                if taken.isEmpty { state.draining = false }
                return taken
            }
            if batch.isEmpty { return }
            let outcomes = commit(&batch, takingLateEdits: true)
            // By index: no copy of each edit and its outcome on the way.
            for index in batch.indices { batch[index].complete(outcomes[index]) }
        }
    }

    /// How many times a write encodes its document again to take in edits
    /// queued while it was encoding (see ``commit(_:takingLateEdits:)``).
    static let maxReencodes = 2

    /// How many times a write takes in edits queued while it applied the
    /// ones it had, before it encodes (see ``commit(_:takingLateEdits:)``).
    static let maxLateTakes = 8

    /// Moves the edits queued since the batch was taken to its end; false
    /// when there were none.
    private func takeLateEdits(
        into batch: inout [PendingEdit], outcomes: inout [Result<any Sendable, any Error>]
    ) -> Bool {
        let late = state.withLock { $0.takePending() }
        if late.isEmpty { return false }
        batch.append(contentsOf: late)
        outcomes.append(
            contentsOf: repeatElement(
                .success(()) as Result<any Sendable, any Error>, count: late.count))
        return true
    }

    /// Applies a batch of edits in one durable write; returns each edit's
    /// outcome, by index in `batch`.
    ///
    /// With `takingLateEdits`, edits queued while the write is being
    /// prepared join it, at the end of `batch`, in the order they were
    /// queued — as long as the file has not been touched yet: those queued
    /// while the batch's transforms ran (up to ``maxLateTakes`` times before
    /// each encoding), and those queued while its document was encoded,
    /// which is then encoded again (up to ``maxReencodes`` times in all, so
    /// a steady stream of edits delays a write by two encodings, and the
    /// edits taken in before each, at most; a backend without a lock that
    /// loses its compare-and-swap applies the batch again, and may take in
    /// more before each of its attempts). A burst of edits from many
    /// tasks then costs one or two durable writes instead of one for the
    /// first edit and one for the rest, and a lone edit costs one look at
    /// the queue.
    private func commit(_ batch: inout [PendingEdit], takingLateEdits: Bool)
        -> [Result<any Sendable, any Error>]
    {
        var outcomes = [Result<any Sendable, any Error>](
            repeating: .success(()), count: batch.count)
        var reencodes = takingLateEdits ? 0 : Self.maxReencodes
        // The notes the batch's edits left, once it is committed.
        var reports: [PreferencesProblem] = []
        do {
            try storage.withExclusiveAccess {
                if !state.withLock({ $0.loaded }) { try load(policy: corruption) }
                attempts: for _ in 0..<storage.maxWriteAttempts {
                    try refreshBeforeWrite()
                    let (base, revision) = state.withLock { ($0.snapshot, $0.revision) }
                    var working = MutablePreferences(snapshot: base, limits: limits)
                    var applied = 0
                    var lateTakes = takingLateEdits ? 0 : Self.maxLateTakes
                    while true {
                        for index in applied..<batch.count {
                            working.beginTransform()
                            do {
                                let value = try batch[index].apply(&working)
                                if let failure = working.failure { throw failure }
                                working.endTransform()
                                outcomes[index] = .success(value)
                            } catch {
                                working.rollBackTransform()
                                outcomes[index] = .failure(error)
                            }
                        }
                        applied = batch.count
                        if lateTakes < Self.maxLateTakes,
                            takeLateEdits(into: &batch, outcomes: &outcomes)
                        {
                            lateTakes += 1
                            continue
                        }
                        // The keys whose value differs from `base`, from the
                        // few the batch changed, where it knows them: then
                        // neither the check below nor the change records
                        // compare every value.
                        let changedKeys = working.changedKeys.map { keys in
                            keys.filter { working.values[$0] != base.values[$0] }
                        }
                        // S5: an edit that changes nothing writes nothing.
                        if working.version == base.version
                            && (!working.changed
                                || (changedKeys.map(\.isEmpty) ?? (working.values == base.values)))
                        {
                            reports = working.reports
                            return
                        }
                        let document = StoreDocument(
                            editing: base, values: working.values, version: working.version,
                            stamp: .now(), changedKeys: changedKeys)
                        let (bytes, keyOrder) = try document.encode(
                            file: storage.location, limits: limits,
                            reusingKeyOrder: lastKeyOrder.withLock { $0 })
                        lastKeyOrder.withLock { $0 = keyOrder }
                        if reencodes < Self.maxReencodes,
                            takeLateEdits(into: &batch, outcomes: &outcomes)
                        {
                            reencodes += 1
                            lateTakes = 0
                            continue
                        }
                        if let written = try storage.write(bytes, ifRevision: revision) {
                            reports = working.reports
                            publish(document, revision: written, knownChanged: true)
                            return
                        }
                        // Someone wrote without the lock between our read and
                        // write: re-read, and apply the whole batch again.
                        continue attempts
                    }
                }
                throw PreferencesError.io(
                    operation: "write", path: storage.location, code: 0,
                    message: "the file kept changing during the write; try again")
            }
            if !reports.isEmpty { keep(reports) }
        } catch let error as PreferencesError where batch.count > 1 && isPerEditError(error) {
            // One edit's result was too large: give each edit its own write so
            // only the offending one fails.
            return batch.map { edit in
                var alone = [edit]
                return commit(&alone, takingLateEdits: false)[0]
            }
        } catch {
            // A write can fail after the new file is already in place (the
            // directory fsync, say): re-read so memory shows what disk holds.
            try? refreshIfChanged(policy: nil)
            for index in outcomes.indices where (try? outcomes[index].get()) != nil {
                outcomes[index] = .failure(error)
            }
        }
        return outcomes
    }

    /// How many notes left by edits ``problems`` keeps (the latest).
    static let maxEditReports = 100

    /// Lists notes left by committed edits among the problems.
    private func keep(_ reports: [PreferencesProblem]) {
        state.withLock { state in
            state.editReports.append(contentsOf: reports)
            let excess = state.editReports.count - Self.maxEditReports
            if excess > 0 { state.editReports.removeFirst(excess) }
        }
        notifyProblemWatchers()
    }

    private func isPerEditError(_ error: PreferencesError) -> Bool {
        if case .limitExceeded = error { return true }
        return false
    }

    // MARK: Migrations

    private func migrate(_ migrations: [any PreferencesMigration]) throws {
        let current = snapshot
        guard try migrations.contains(where: { try $0.shouldMigrate(current) }) else { return }
        let (ran, reports): ([any PreferencesMigration], [PreferencesProblem]) =
            try storage.withExclusiveAccess {
                // Under a lock this runs once; without one (a distributed
                // backend), a lost compare-and-swap runs the steps again on
                // the newer state rather than failing the open.
                for _ in 0..<storage.maxWriteAttempts {
                    try refreshIfChanged(policy: corruption)
                    let (base, revision) = state.withLock { ($0.snapshot, $0.revision) }
                    var working = MutablePreferences(snapshot: base, limits: limits)
                    var ran: [any PreferencesMigration] = []
                    for migration in migrations where try migration.shouldMigrate(working.snapshot)
                    {
                        do {
                            try migration.migrate(&working)
                            if let failure = working.failure { throw failure }
                        } catch let error as PreferencesError {
                            throw error
                        } catch {
                            throw PreferencesError.migrationFailed(
                                step: migration.name, reason: "\(error)")
                        }
                        ran.append(migration)
                    }
                    if working.values != base.values || working.version != base.version {
                        let document = StoreDocument(
                            editing: base, values: working.values, version: working.version,
                            stamp: .now())
                        let bytes = try document.encode(file: storage.location, limits: limits)
                        guard let written = try storage.write(bytes, ifRevision: revision) else {
                            continue
                        }
                        publish(document, revision: written)
                    }
                    return (ran, working.reports)
                }
                throw PreferencesError.io(
                    operation: "migrate", path: storage.location, code: 0,
                    message: "the file kept changing during the migration; open again")
            }
        var problems = reports
        for migration in ran {
            do {
                try migration.cleanUp()
            } catch {
                problems.append(
                    PreferencesProblem(
                        key: nil,
                        message: "clean-up of migration '\(migration.name)' failed: \(error)"))
            }
        }
        state.withLock { $0.migrationProblems = problems }
        notifyProblemWatchers()
    }

    // MARK: Subscribers

    /// Registers a subscriber, delivers the current state to it, and starts
    /// the watcher if nobody needed it yet. Returns the id for
    /// ``unsubscribe(_:)``.
    func subscribe(_ deliver: @escaping @Sendable (PreferencesSnapshot, UInt64) -> Void) -> UInt64 {
        let (id, snapshot, generation, start) = state.withLock { state in
            state.nextID += 1
            let start = !state.wantsWatch
            state.subscribers[state.nextID] = Subscriber(deliver: deliver)
            return (state.nextID, state.snapshot, state.generation, start)
        }
        deliver(snapshot, generation)
        if start { startWatching(catchingUp: true) }
        return id
    }

    func unsubscribe(_ id: UInt64) {
        state.withLock { $0.subscribers[id] = nil }
        stopWatchingIfUnneeded()
    }

    /// Counts a handle with live reads; the first starts the watcher. The
    /// caller loads right after, so there is nothing to catch up.
    fileprivate func addLiveReader() {
        let start = state.withLock { state in
            defer { state.liveReaders += 1 }
            return !state.wantsWatch
        }
        if start { startWatching(catchingUp: false) }
    }

    fileprivate func removeLiveReader() {
        state.withLock { $0.liveReaders -= 1 }
        stopWatchingIfUnneeded()
    }

    private func stopWatchingIfUnneeded() {
        let watch = state.withLock { state -> (any StorageWatch)? in
            guard !state.wantsWatch else { return nil }
            defer { state.watch = nil }
            return state.watch
        }
        watch?.cancel()
    }

    private func startWatching(catchingUp: Bool) {
        let watch = try? storage.watch { [weak self] event in
            guard let self else { return }
            switch event {
            case .changed(let contents):
                self.submit { self.reloadFromWatcher(contents) }
            case .interrupted(let error):
                self.submit { self.watchInterrupted(error) }
            }
        }
        let stale = state.withLock { state -> (any StorageWatch)? in
            // Everyone may have gone while the watch was starting.
            if !state.wantsWatch || state.watch != nil { return watch }
            state.watch = watch
            return nil
        }
        stale?.cancel()
        // Catch a write that happened before the watch began.
        if catchingUp { submit { self.reloadFromWatcher() } }
    }

    /// Lists an interrupted watch among the problems; the state stays as last known.
    private func watchInterrupted(_ error: PreferencesError) {
        state.withLock {
            $0.watchProblem = PreferencesProblem(
                key: nil, message: "\(error.description); showing the last known values")
        }
        notifyProblemWatchers()
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }
    var isWatching: Bool { state.withLock { $0.watch != nil } }
}

/// A handle's claim on live reads (S16): while one exists, the core watches
/// its storage. Released with the handle that holds it.
final class LiveReader: Sendable {
    private let core: StoreCore

    fileprivate init(_ core: StoreCore) {
        self.core = core
        core.addLiveReader()
    }

    deinit { core.removeLiveReader() }
}
