/// One write, as edits and migrations make it (<doc:StoreGuarantees>).
extension StoreCore {
    /// The document that commits `working` over `base`, and its bytes: the
    /// changed keys stamped now, the next sequence number and an entry for
    /// each of `entries` (no secret's values), the temporary values stored.
    /// Holding exclusive access, before the write: older entries go to the
    /// archive first (once per attempt: `archived`), and a file holding
    /// secrets is made private; the change and its entry are one write.
    func prepareWrite(
        of working: MutablePreferences, over base: PreferencesSnapshot,
        adding entries: [PendingEntry], changedKeys: [String]?, archived: inout Bool
    ) throws -> (document: StoreDocument, bytes: [UInt8]) {
        let stamp = PreferenceModification.now()
        var document = StoreDocument(
            editing: base, values: working.values, version: working.version, stamp: stamp,
            changedKeys: changedKeys)
        let secrets = base.secretKeys.union(state.withLock { $0.secrets })
        document.secretKeys = secrets
        document.history = try history(
            after: base, adding: entries, stamp: stamp, secrets: secrets, archived: &archived)
        if !secrets.isEmpty { try keepPrivate() }
        (document.values, document.temporary) = Self.stored(
            base: base, working: working, changedKeys: changedKeys, at: stamp.date)
        let (bytes, keyOrder) = try document.encode(
            file: storage.location, limits: limits,
            reusingKeyOrder: state.withLock { $0.edits.lastKeyOrder })
        state.withLock { $0.edits.lastKeyOrder = keyOrder }
        return (document, bytes)
    }

    /// Runs `attempt` until it returns a value, at most the backend's
    /// ``StorageTuning/maxWriteAttempts`` times; nil means it lost the
    /// compare-and-swap (someone wrote without the lock since it read).
    func retryingLostWrites<Value>(_ operation: String, _ attempt: () throws -> Value?) throws
        -> Value
    {
        let attempts = storage.tuning.maxWriteAttempts
        for number in 1...max(attempts, 1) {
            if let value = try attempt() { return value }
            // Counted for ``PreferencesStore/activity`` when another attempt follows.
            if number < attempts { state.withLock { $0.retriedWriteConflicts += 1 } }
        }
        throw PreferencesError.io(
            operation: operation, path: storage.location, code: 0,
            message: "other writers kept changing it; try again")
    }
}
