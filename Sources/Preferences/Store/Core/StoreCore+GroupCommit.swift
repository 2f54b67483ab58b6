import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Edits and group commit (S4, S5, <doc:StoreGuarantees>): edits wait in a
/// queue; one write applies every edit waiting when it starts, and takes in
/// those queued while it prepares, so a burst of edits from many tasks costs
/// one or two durable writes. Each caller still gets its own result or
/// error, and an edit that throws writes nothing of its own.
extension StoreCore {
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

    /// The edits waiting for a write (``State/edits``).
    struct EditQueue: Sendable {
        /// Numbers the edits (for cancellation) without taking the state's lock.
        static let nextID = Atomic<UInt64>(0)

        var pending: [PendingEdit] = []
        /// Whether a write loop runs on the queue (it takes what is pending).
        var draining = false
        /// The order the last write's keys were sorted into, for the next
        /// write, which usually has the same keys
        /// (``StoreDocument/encode(file:limits:reusingKeyOrder:)``).
        var lastKeyOrder: [Int]?

        /// Takes every queued edit, in the order queued.
        mutating func takeAll() -> [PendingEdit] {
            if pending.isEmpty { return [] }
            defer { pending.removeAll() }
            return pending
        }
    }

    /// Applies `apply` in the next write and returns its result once that
    /// write is durable.
    func edit<Value: Sendable>(
        _ apply: @escaping @Sendable (inout MutablePreferences) throws -> Value
    ) async throws -> Value {
        let id = EditQueue.nextID.wrappingAdd(1, ordering: .relaxed).newValue
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
            guard let index = state.edits.pending.firstIndex(where: { $0.id == id }) else {
                return nil
            }
            return state.edits.pending.remove(at: index)
        }
        dropped?.complete(.failure(CancellationError()))
    }

    /// Queues `edit` for the next write, and starts the writes if none is
    /// under way.
    func enqueue(_ edit: PendingEdit) {
        let startDrain = state.withLock { state in
            state.edits.pending.append(edit)
            defer { state.edits.draining = true }
            return !state.edits.draining
        }
        if startDrain { queue.submit { self.drain() } }
    }

    private func drain() {
        while true {
            var batch = state.withLock { state in
                let taken = state.edits.takeAll()
                if taken.isEmpty { state.edits.draining = false }
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
        let late = state.withLock { $0.edits.takeAll() }
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
        do {
            // The notes the batch's edits left, once it is committed.
            let reports = try storage.withExclusiveAccess {
                if !state.withLock({ $0.current.loaded }) { try load(policy: corruption) }
                return try retryingLostWrites("write") {
                    try attemptCommit(
                        &batch, outcomes: &outcomes, takingLateEdits: takingLateEdits,
                        reencodes: &reencodes)
                }
            }
            if !reports.isEmpty { keep(reports) }
        } catch PreferencesError.limitExceeded where batch.count > 1 {
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

    /// One attempt of ``commit(_:takingLateEdits:)``, holding exclusive
    /// access: applies the batch to the state as read now, taking in late
    /// edits, and writes it. Returns the edits' notes, or nil when the
    /// compare-and-swap was lost (the next attempt applies the batch again).
    private func attemptCommit(
        _ batch: inout [PendingEdit], outcomes: inout [Result<any Sendable, any Error>],
        takingLateEdits: Bool, reencodes: inout Int
    ) throws -> [PreferencesProblem]? {
        try refreshBeforeWrite()
        // Whether this attempt moved older history entries to the archive.
        var archived = false
        let (current, revision) = state.withLock { ($0.current.snapshot, $0.current.revision) }
        // Temporary values that ended since the state was read no longer
        // hold for the edits.
        let base = current.document.temporary.isEmpty ? current : current.reading(at: Date())
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
            if lateTakes < Self.maxLateTakes, takeLateEdits(into: &batch, outcomes: &outcomes) {
                lateTakes += 1
                continue
            }
            // The keys whose value differs from `base`, from the few the
            // batch changed, where it knows them: then neither the check
            // below nor the change records compare every value.
            let changedKeys = working.changedKeys.map { keys in
                keys.filter { working.values[$0] != base.values[$0] }
            }
            // S5: an edit that changes nothing writes nothing.
            if working.version == base.version
                && (!working.changed
                    || (changedKeys.map(\.isEmpty) ?? (working.values == base.values)))
                && !Self.changesTemporaryValues(base: base, working: working)
            {
                return working.reports
            }
            // Each key's old and new value, only when entries are kept: the
            // change still takes its number.
            let change = PendingEntry(
                changes: keepsHistory(after: base)
                    ? Self.changes(from: base.values, to: working.values, keys: changedKeys) : [:],
                versionChange: working.version == base.version
                    ? nil : (base.version, working.version),
                causes: working.causes)
            let (document, bytes) = try prepareWrite(
                of: working, over: base, adding: [change], changedKeys: changedKeys,
                archived: &archived)
            if reencodes < Self.maxReencodes, takeLateEdits(into: &batch, outcomes: &outcomes) {
                reencodes += 1
                lateTakes = 0
                continue
            }
            guard let written = try storage.write(bytes, ifRevision: revision) else { return nil }
            publish(document, revision: written, knownChanged: true)
            return working.reports
        }
    }
}
