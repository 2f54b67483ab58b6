/// One core per file within the process (S9).
enum StoreRegistry {
    private final class WeakCore: Sendable {
        weak let core: StoreCore?
        init(_ core: StoreCore) { self.core = core }
    }

    // A pthread mutex ThreadSanitizer models (see `Locked`): stores opened
    // on many threads at once meet here.
    private static let cores = Locked<(byIdentity: [String: WeakCore], sweepAt: Int)>(([:], 16))

    /// The core of the stores whose open has `identity`
    /// (``StorageOpening/identity``), made on `storage` if there is none.
    static func core(
        for storage: any PreferencesStorage, identity: String?, limits: PreferencesLimits,
        corruption: CorruptionPolicy
    ) -> StoreCore {
        guard let identity else {
            return StoreCore(storage: storage, limits: limits, corruption: corruption)
        }
        return cores.withLock { state in
            if let existing = state.byIdentity[identity]?.core { return existing }
            // Entries of closed stores are dropped when the table has grown
            // to twice its size after the last sweep, so that a process
            // opening many stores pays a constant share of the sweeps per
            // open, not a walk of every entry each time.
            if state.byIdentity.count >= state.sweepAt {
                state.byIdentity = state.byIdentity.filter { $0.value.core != nil }
                state.sweepAt = max(16, 2 * state.byIdentity.count)
            }
            let core = StoreCore(storage: storage, limits: limits, corruption: corruption)
            state.byIdentity[identity] = WeakCore(core)
            return core
        }
    }
}
