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
    struct PendingEdit: GroupCommitEdit, Sendable {
        let id: UInt64
        let transform: @Sendable (inout MutablePreferences) throws -> any Sendable
        let continuation: UnsafeContinuation<any Sendable, any Error>

        func apply(to working: inout MutablePreferences) throws -> any Sendable {
            try transform(&working)
        }

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
        /// The last file written, and its revision, for the next write,
        /// which usually changes a few values of the same keys
        /// (``StoreDocument/encode(file:limits:after:changedKeys:)``).
        var lastFile: (revision: StorageRevision, file: EncodedFile)?

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
                enqueue(PendingEdit(id: id, transform: apply, continuation: continuation))
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
            let batch = state.withLock { state in
                let taken = state.edits.takeAll()
                if taken.isEmpty { state.edits.draining = false }
                return taken
            }
            if batch.isEmpty { return }
            var machine = GroupCommitMachine(batch, takingLateEdits: true)
            if commit(&machine) == .fallBack {
                // One edit's result was too large: each edit gets its own
                // write, so only the offending one fails.
                let outcomes = machine.batch.map { edit in
                    var alone = GroupCommitMachine([edit], takingLateEdits: false)
                    _ = commit(&alone)
                    // Alone, it took no late edit: no other caller waits on it.
                    precondition(alone.batch.count == 1)
                    return alone.outcomes[0]
                }
                for (edit, outcome) in zip(machine.batch, outcomes) { edit.complete(outcome) }
                continue
            }
            // By index: no copy of each edit and its outcome on the way.
            for index in machine.batch.indices {
                machine.batch[index].complete(machine.outcomes[index])
            }
        }
    }

    /// Runs `machine`'s commit to its end (``GroupCommitMachine/Action/finish``
    /// or ``GroupCommitMachine/Action/fallBack``), doing the I/O it asks for
    /// through the one commit routine (``committing(_:_:)``).
    private func commit(_ machine: inout GroupCommitMachine<PendingEdit>)
        -> GroupCommitMachine<PendingEdit>.Action
    {
        do {
            var attempts = 0
            try committing("write") { () -> Void? in
                attempts += 1
                if !state.withLock({ $0.current.loaded }) { try load(policy: corruption) }
                // No writer that takes the lock wrote since the state was
                // read: the write's compare-and-swap is check enough, and a
                // lost one reads again on the next attempt.
                let known = state.withLock { $0.current.revision }
                if attempts > 1
                    || (storage as? FileStorage)?.isUnchangedByLockingWriters(since: known) != true
                {
                    try refreshBeforeWrite()
                }
                // Whether this attempt moved older history entries to the archive.
                var archived = false
                let (current, revision) = state.withLock {
                    ($0.current.snapshot, $0.current.revision)
                }
                // Temporary values that ended since the state was read no
                // longer hold for the edits.
                let base =
                    current.document.temporary.isEmpty ? current : current.reading(at: Date())
                var prepared: PreparedWrite?
                var action = machine.start(over: base, limits: limits)
                while true {
                    switch action {
                    case .takeLateEdits:
                        action = machine.take(late: state.withLock { $0.edits.takeAll() })
                    case .encode(let changedKeys):
                        let change = entry(
                            .edits, to: machine.working, over: base, keys: changedKeys)
                        prepared = try prepareWrite(
                            of: machine.working, over: base, adding: [change],
                            changedKeys: changedKeys, archived: &archived)
                        action = machine.encoded()
                    case .write:
                        guard let prepared else { preconditionFailure("a write before encoding") }
                        let written = try write(prepared, ifRevision: revision, knownChanged: true)
                        action = machine.wrote(written != nil)
                    case .readAgain:
                        return nil
                    case .finish, .fallBack:
                        return ()
                    }
                }
            }
            if !machine.reports.isEmpty { keep(machine.reports) }
            return .finish
        } catch {
            let action = machine.failed(error)
            // A write can fail after the new file is already in place (the
            // directory fsync, say): re-read so memory shows what disk holds.
            if action == .finish { try? refreshIfChanged(policy: nil) }
            return action
        }
    }
}
