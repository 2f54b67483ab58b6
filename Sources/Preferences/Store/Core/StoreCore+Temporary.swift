import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Temporary values (A4, <doc:ChangingSettingsSafely>): what a write stores
/// for them, and the moment each ends, when reads and feeds go back to the
/// stored value with no write.
extension StoreCore {
    /// What a write of `working` over `base` stores: the values as they
    /// read once the temporary values end, and the temporary values. A key
    /// the edit set temporarily keeps its stored value and gets the new one
    /// as a temporary value; a key the edit changed otherwise is stored as
    /// changed and its temporary value ends; temporary values that ended
    /// are dropped.
    static func stored(
        base: PreferencesSnapshot, working: MutablePreferences, changedKeys: [String]?,
        at now: Date
    ) -> (values: [String: PreferenceValue], temporary: TemporaryValues) {
        // Without temporary values, what reads see is what is stored.
        if base.document.temporary.isEmpty && working.temporaries.isEmpty {
            return (working.values, TemporaryValues())
        }
        var temporary = TemporaryValues()
        temporary.overrides = base.document.temporary.active(at: now)
        var stored = base.document.values
        let changed =
            changedKeys
            ?? Array(
                Set(base.values.keys).union(working.values.keys).filter {
                    base.values[$0] != working.values[$0]
                })
        for key in Set(changed).union(working.ordinaryKeys).union(working.temporaries.keys) {
            if let override = working.temporaries[key] {
                temporary.overrides[key] = override
            } else {
                stored[key] = working.values[key]
                temporary.overrides[key] = nil
            }
        }
        return (stored, temporary)
    }

    /// Whether `working` ends a temporary value that holds in `base`, or
    /// sets one: a change even when no value reads differently.
    static func changesTemporaryValues(base: PreferencesSnapshot, working: MutablePreferences)
        -> Bool
    {
        !working.temporaries.isEmpty
            || (!base.temporaryEnds.isEmpty
                && !working.ordinaryKeys.isDisjoint(with: base.temporaryEnds.keys))
    }

    /// Makes reads and feeds go back to the stored value when the next
    /// temporary value of `snapshot` ends. A later publish schedules its
    /// own end; the earlier one then finds the state moved on.
    func scheduleTemporaryEnd(of snapshot: PreferencesSnapshot) {
        guard let end = snapshot.document.temporary.nextEnd(after: Date()) else { return }
        let generation = state.withLock { $0.current.generation }
        let delay = max(0, end.timeIntervalSinceNow) + 0.001
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            self.queue.submit { self.endTemporaryValues(after: generation) }
        }
    }

    /// Publishes the current state as it reads now, when a temporary value
    /// ended since generation `scheduled`; on the queue.
    private func endTemporaryValues(after scheduled: UInt64) {
        let delivery = state.withLock {
            state -> (PreferencesSnapshot, UInt64, [Subscriber])? in
            guard state.current.generation == scheduled else { return nil }
            let now = state.current.snapshot.reading(at: Date())
            guard now != state.current.snapshot else { return nil }
            state.current.snapshot = now
            state.current.generation += 1
            return (now, state.current.generation, Array(state.watching.subscribers.values))
        }
        guard let (snapshot, generation, subscribers) = delivery else {
            // Not ended yet (a clock that moved back), or the state moved
            // on and scheduled its own end.
            let current = state.withLock { $0.current }
            if current.generation == scheduled { scheduleTemporaryEnd(of: current.snapshot) }
            return
        }
        for subscriber in subscribers { subscriber.deliver(snapshot, generation) }
        if !snapshot.document.temporary.isEmpty { scheduleTemporaryEnd(of: snapshot) }
    }
}
