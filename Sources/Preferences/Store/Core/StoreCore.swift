import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The shared state behind every ``PreferencesStore`` handle on one
/// document (S9, <doc:StoreGuarantees>): the snapshot that reads use, the
/// edits waiting for a write, the change feed's subscribers, and the
/// problems found on the way.
///
/// Each concern has its own file and its own part of ``State``:
///
/// | concern | file | state |
/// |---|---|---|
/// | one core per document in the process | `StoreRegistry.swift` | (its own) |
/// | the order of storage work | `StoreQueue.swift` | (its own) |
/// | reads and publishing a new state | this file | ``State/current`` |
/// | opening, reloading, corruption | `StoreCore+Loading.swift` | ``State/current`` |
/// | edits and group commit | `StoreCore+GroupCommit.swift` | ``State/edits`` |
/// | group commit's rules, as a value | `GroupCommitMachine.swift` | (its own) |
/// | migrations | `StoreCore+Migration.swift` | — |
/// | the one commit routine every write goes through | `StoreCore+Commit.swift` | — |
/// | history entries, the archive, secrets | `StoreCore+History.swift` | ``State/secrets`` |
/// | temporary values and their end | `StoreCore+Temporary.swift` | ``State/current`` |
/// | the watch, live reads, feeds | `StoreCore+Watching.swift` | ``State/watching`` |
/// | problems | `ProblemLog.swift` | ``State/problems`` |
/// | the published manifest | `StoreCore+Manifest.swift` | ``State/declared`` |
/// | this process's registration as a replica | `StoreCore+Replica.swift` | ``replica`` |
///
/// All storage I/O goes through ``queue``, one piece at a time. The storage
/// is watched while a handle with live reads is open (S16) or a change feed
/// is active (C5, <doc:ObservingChanges>); the watch holds the core weakly,
/// so it ends when the last handle goes.
@usableFromInline
final class StoreCore: Sendable {
    let storage: any PreferencesStorage
    let limits: PreferencesLimits
    let corruption: CorruptionPolicy
    let queue = StoreQueue()

    struct State: Sendable {
        var current = Current()
        var edits = EditQueue()
        var watching = Watching()
        var problems = ProblemLog()
        /// The keys declared by this process's handles (7.6, <doc:CommandLineTool>).
        var declared = PreferencesManifest()
        /// The keys this process knows to be secret (A3,
        /// <doc:ChangingSettingsSafely>); every write adds them to the
        /// document's.
        var secrets: Set<String> = []
        /// Writes that lost their compare-and-swap and were tried again,
        /// since the core was made (``PreferencesStore/activity``).
        var retriedWriteConflicts = 0
    }

    /// What reads see, and where it came from.
    struct Current: Sendable {
        var snapshot = PreferencesSnapshot()
        /// The backend's revision `snapshot` was read or written at.
        var revision = StorageRevision.absent
        /// Moves with every new state delivered to subscribers.
        var generation: UInt64 = 0
        /// Whether the document has been read once.
        var loaded = false
    }

    let state = Locked(State())
    /// This process's registration as a replica, while live reads are on
    /// (`StoreCore+Replica.swift`).
    let replica = Locked<ReplicaReporter?>(nil)

    init(storage: any PreferencesStorage, limits: PreferencesLimits, corruption: CorruptionPolicy) {
        self.storage = storage
        self.limits = limits
        self.corruption = corruption
    }

    deinit {
        state.withLock { $0.watching.watch }?.cancel()
        replica.withLock { $0 }?.close()
    }

    // MARK: Reading

    var snapshot: PreferencesSnapshot { state.withLock { $0.current.snapshot } }

    /// One stored value, without copying the snapshot (the read fast path).
    @usableFromInline
    func storedValue(_ name: String) -> PreferenceValue? {
        state.withLock { $0.current.snapshot.values[name] }
    }

    // MARK: Publishing

    /// Makes `document` the current state and tells subscribers, unless it
    /// equals the current state (an unchanged rewrite delivers nothing).
    ///
    /// Comparing two states is O(n), so it runs outside the state lock that
    /// every read takes: against the state as of a generation, which is then
    /// replaced under the lock only if the generation has not moved meanwhile
    /// (else compared again). Called on the queue.
    func publish(
        _ document: StoreDocument, revision: StorageRevision, knownChanged: Bool = false
    ) {
        while !knownChanged {
            let (current, generation) = state.withLock {
                ($0.current.snapshot, $0.current.generation)
            }
            guard
                document.version == current.version && document.values == current.document.values
                    && document.temporary == current.document.temporary
            else { break }
            let unchanged = state.withLock { state in
                guard state.current.generation == generation else { return false }
                state.current.revision = revision
                // Change records and unknown members are kept even when no
                // value changed, so the next write carries them over; only a
                // value or version change is news for subscribers.
                state.current.snapshot = PreferencesSnapshot(
                    document, registeredDefaults: state.current.snapshot.registeredDefaults)
                return true
            }
            if unchanged {
                reportApplied()
                return
            }
        }
        let (snapshot, generation, subscribers, replaced) = changeProblems { state in
            let old = state.current.snapshot
            state.current.revision = revision
            state.current.snapshot = PreferencesSnapshot(
                document, registeredDefaults: old.registeredDefaults)
            state.current.generation += 1
            let new = state.current.snapshot
            state.problems.forgetMismatches { key in old.values[key] != new.values[key] }
            return (
                state.current.snapshot, state.current.generation,
                Array(state.watching.subscribers.values), old
            )
        }
        // The replaced values are freed here, outside the lock (also O(n)).
        withExtendedLifetime(replaced) {}
        for subscriber in subscribers { subscriber.deliver(snapshot, generation) }
        reportApplied()
        if !snapshot.document.temporary.isEmpty { scheduleTemporaryEnd(of: snapshot) }
    }

    /// Registers defaults for keys without a typed declaration; they are
    /// part of the snapshot, never written.
    func register(defaults: [String: PreferenceValue]) {
        let delivery = state.withLock { state in
            var merged = state.current.snapshot.registeredDefaults
            merged.merge(defaults) { _, new in new }
            state.current.snapshot = state.current.snapshot.registering(merged)
            state.current.generation += 1
            return (
                state.current.snapshot, state.current.generation,
                Array(state.watching.subscribers.values)
            )
        }
        for subscriber in delivery.2 { subscriber.deliver(delivery.0, delivery.1) }
    }
}
