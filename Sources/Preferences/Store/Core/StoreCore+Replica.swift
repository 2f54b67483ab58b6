import Dispatch
import Foundation

/// Registering this process as a replica of the store while a handle with
/// live reads is open, and reporting the last change it has applied (F2,
/// <doc:RollingOutAChange>).
extension StoreCore {
    /// Registers this process with the backend unless it is already, on the
    /// queue after an open with live reads, without making the open wait: a
    /// cold start pays nothing for it (P8), and a handle dropped before the
    /// queue reaches the registration never registers, as a process that
    /// only reads a key and exits is no replica to wait for. A backend that
    /// cannot register (the default) does nothing; a failure is kept as a
    /// problem.
    func scheduleReplica() {
        queue.submit { self.registerReplica() }
    }

    /// Returns once a registration scheduled before has been made (or found
    /// unwanted).
    func replicaScheduled() async {
        await queue.run {}
    }

    private func registerReplica() {
        let wanted = state.withLock { $0.watching.liveReaders > 0 }
        guard wanted, replica.withLock({ $0 == nil }) else { return }
        var me = PreferencesReplica.current()
        me.applied = state.withLock { $0.current.snapshot.sequence }
        me.manifest = state.withLock { $0.declared.entries.isEmpty ? "" : $0.declared.digest }
        do {
            guard let registration = try storage.register(me) else { return }
            let reporter = ReplicaReporter(registration, me)
            let stale = replica.withLock { slot -> ReplicaReporter? in
                // Every live reader may have gone meanwhile.
                let wanted = state.withLock { $0.watching.liveReaders > 0 }
                if !wanted || slot != nil { return reporter }
                slot = reporter
                return nil
            }
            stale?.close()
        } catch {
            state.withLock {
                $0.problems.manifest.append(
                    PreferencesProblem(
                        key: nil, message: "this process could not register itself: \(error)"))
            }
        }
    }

    /// Ends the registration (the last live reader has gone).
    func endReplica() {
        replica.withLock { slot in
            defer { slot = nil }
            return slot
        }?.close()
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
    }
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
            if now { queue.sync { self.write() } } else { queue.async { self.write() } }
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
            return state.replica
        }
        if let replica { try? registration.update(replica) }
    }

    func close() {
        state.withLock { $0.closed = true }
        queue.sync { registration.close() }
    }
}
