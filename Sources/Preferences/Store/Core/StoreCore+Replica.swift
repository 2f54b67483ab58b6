import Dispatch

/// Registering this process as a replica of the store while a handle with
/// live reads is open, and reporting the last change it has applied (F2,
/// <doc:RollingOutAChange>).
extension StoreCore {
    /// Registers this process with the backend unless it is already, on the
    /// queue shortly after an open with live reads, without making the open
    /// wait: a cold start pays nothing for it (P8), and a handle dropped
    /// before then never registers, as a process that only reads a key and
    /// exits is no replica to wait for. A backend without
    /// ``PreferencesStorage/replicas`` does nothing; a failure is kept as a
    /// problem.
    func scheduleReplica() {
        PendingRegistrations.shared.add(self)
    }

    /// How long after an open with live reads the process registers, at
    /// most: a handle dropped sooner (a tool that reads a key and exits)
    /// may never do.
    static let registrationDelay = 1.0

    /// Registers now if a registration is wanted and not made yet, and
    /// returns once it is made (or found unwanted).
    func replicaScheduled() async {
        await queue.run { self.registerReplica() }
    }

    /// Pauses between failed registrations: from 0.5 s, doubling, to 5 s.
    static func registrationRetryPause(after failures: Int) -> Double {
        min(0.5 * Double(1 << min(failures - 1, 4)), 5.0)
    }

    /// Registers this process unless it is already, or no live reader
    /// wants it. A failure (a cluster out of reach) is listed among the
    /// problems and tried again after a growing pause, for as long as a
    /// live reader is open; the problem goes when a registration is made.
    fileprivate func registerReplica(failures: Int = 0) {
        guard state.withLock({ $0.watching.liveReaders > 0 }) else {
            // Nobody wants it any more: neither the registration nor its problem.
            return changeProblems { $0.problems.registration = nil }
        }
        guard replica.withLock({ $0 == nil }) else { return }
        var me = PreferencesReplica.current()
        me.applied = state.withLock { $0.current.snapshot.sequence }
        me.manifest = state.withLock { $0.declared.entries.isEmpty ? "" : $0.declared.digest }
        do {
            guard let registration = try storage.replicas?.register(me) else { return }
            let reporter = ReplicaReporter(registration, me)
            let stale = replica.withLock { slot -> ReplicaReporter? in
                // Every live reader may have gone meanwhile.
                let wanted = state.withLock { $0.watching.liveReaders > 0 }
                if !wanted || slot != nil { return reporter }
                slot = reporter
                return nil
            }
            stale?.close()
            changeProblems { $0.problems.registration = nil }
        } catch {
            let pause = Self.registrationRetryPause(after: failures + 1)
            changeProblems {
                $0.problems.registration = PreferencesProblem(
                    key: nil,
                    message: "this process could not register itself: \(error); "
                        + "trying again in \(pause) s")
            }
            // Not `queue.submit(after:)`: the pause must not count as the
            // queue's work, which would send every write through the queue
            // meanwhile.
            DispatchQueue.global().asyncAfter(deadline: .now() + pause) { [weak self] in
                guard let self else { return }
                self.queue.submit { self.registerReplica(failures: failures + 1) }
            }
        }
    }

    /// Ends the registration (the last live reader has gone); `waiting`,
    /// returns once it is gone.
    func endReplica(waiting: Bool = false) {
        replica.withLock { slot in
            defer { slot = nil }
            return slot
        }?.close(waiting: waiting)
    }

    /// Reports the sequence now applied, if registered.
    func reportApplied() {
        guard let reporter = replica.withLock({ $0 }) else { return }
        reporter.update(applied: state.withLock { $0.current.snapshot.sequence })
    }

    /// Reports a new manifest digest, if registered, before returning: a
    /// writer checking values against the running replicas' manifests
    /// (F5) sees it once ``PreferencesStore/declare(_:)`` returns.
    func reportManifest(_ digest: String) {
        replica.withLock { $0 }?.update(manifest: digest, now: true)
    }
}

/// One registration and what it last said: updates are written on a queue
/// of their own, and those that come while one waits to be written are
/// merged into it, so a burst of changes costs one small write.
final class ReplicaReporter: Sendable {
    private let registration: any ReplicaRegistration
    private struct State {
        var replica: PreferencesReplica
        var written: PreferencesReplica
        var scheduled = false
        var closed = false
        /// When the last report was written: the next waits until
        /// ``spacing`` after it, taking every change made meanwhile.
        var lastWrite = DispatchTime(uptimeNanoseconds: 0)
    }
    /// At most one report per this many nanoseconds (10 ms): a burst of
    /// changes costs one write per interval, a lone change none of the wait.
    static let spacing: UInt64 = 10_000_000
    private let state: Locked<State>
    private let queue = DispatchQueue(label: "prefs.replica.report")

    init(_ registration: any ReplicaRegistration, _ replica: PreferencesReplica) {
        self.registration = registration
        state = Locked(State(replica: replica, written: replica))
    }

    func update(applied: Int64? = nil, manifest: String? = nil, now: Bool = false) {
        let schedule = state.withLock { state -> Bool in
            if let applied { state.replica.applied = max(state.replica.applied, applied) }
            if let manifest { state.replica.manifest = manifest }
            guard !state.closed, !state.scheduled, state.replica != state.written else {
                return false
            }
            state.scheduled = true
            return true
        }
        if schedule {
            if now {
                queue.sync { self.write() }
            } else {
                let next = state.withLock { $0.lastWrite.uptimeNanoseconds } + Self.spacing
                queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: next)) { self.write() }
            }
        } else if now {
            // One is scheduled already: wait for it.
            queue.sync {}
        }
    }

    private func write() {
        let replica = state.withLock { state -> PreferencesReplica? in
            state.scheduled = false
            guard !state.closed, state.replica != state.written else { return nil }
            state.written = state.replica
            state.lastWrite = .now()
            return state.replica
        }
        if let replica { try? registration.update(replica) }
    }

    /// Ends the registration without waiting for a report being written:
    /// a handle let go on one of Swift's few cooperative threads must not
    /// hold it for a request to a cluster that may be gone.
    /// With `waiting`, returns once the registration is gone (for a
    /// store being closed, off Swift's cooperative threads).
    func close(waiting: Bool = false) {
        state.withLock { $0.closed = true }
        if waiting {
            registration.closeAndWait()
        } else {
            registration.close()
        }
    }
}

/// Opens waiting to register their process, registered together when the
/// delay after the first of them has passed: one timer for a burst of
/// opens, not one each.
final class PendingRegistrations: Sendable {
    static let shared = PendingRegistrations()

    private final class Pending: Sendable {
        weak let core: StoreCore?
        init(_ core: StoreCore) { self.core = core }
    }
    private let pending = Locked<[Pending]>([])

    func add(_ core: StoreCore) {
        let first = pending.withLock { pending in
            pending.append(Pending(core))
            return pending.count == 1
        }
        guard first else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + StoreCore.registrationDelay) {
            let cores = self.pending.withLock { pending in
                defer { pending = [] }
                return pending.compactMap(\.core)
            }
            for core in cores { core.queue.submit { core.registerReplica() } }
        }
    }
}
