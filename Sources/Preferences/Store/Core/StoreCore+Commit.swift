/// The one commit routine (<doc:StoreGuarantees>): edits, migrations and
/// the reset after corruption all write through it, and differ only in
/// what they change (``ChangeKind``).
///
/// Under exclusive access (``committing(_:_:)``), each attempt reads the
/// state, makes its change, builds the document (``prepareWrite(of:over:adding:changedKeys:archived:)``:
/// the stamp, the history entries, privacy for secrets), and writes it if
/// nobody wrote since the state was read, then publishes it
/// (``write(_:ifRevision:knownChanged:)``). A lost compare-and-swap starts
/// another attempt, up to the backend's ``StorageTuning/maxWriteAttempts``.
extension StoreCore {
    /// What one numbered change is. Its history entry follows from it and
    /// from the values it changed (``entry(_:to:over:since:keys:)``).
    enum ChangeKind {
        /// The edits of one group commit, with the causes they named.
        case edits
        /// One migration step, and the causes it named.
        case migration(name: String)
        /// A fresh start after a corrupt document was moved to `movedTo`.
        case reset(movedTo: String)
    }

    /// A document ready to be written, and its file.
    struct PreparedWrite {
        var document: StoreDocument
        var file: EncodedFile
    }

    /// The entry of one change that made `working`: attributed to this
    /// process, with the causes its kind names, and — when entries are kept
    /// after `base` — each changed key's old and new value since `before`
    /// (by default `base`'s), comparing only `keys` when they are known.
    /// Every change's entry is made here.
    func entry(
        _ kind: ChangeKind, to working: MutablePreferences, over base: PreferencesSnapshot,
        since before: (values: [String: PreferenceValue], version: Int)? = nil,
        keys: [String]? = nil
    ) -> PendingEntry {
        let (values, version) = before ?? (base.values, base.version)
        let causes: [String]
        switch kind {
        case .edits:
            causes = working.causes
        case .migration(let name):
            causes = ["migration: \(name)"] + working.causes
        case .reset(let place):
            causes = ["reset after corruption; the file was moved to \(place)"]
        }
        // The change takes its number even when no entry is kept.
        return PendingEntry(
            changes: keepsHistory(after: base)
                ? Self.changes(from: values, to: working.values, keys: keys) : [:],
            versionChange: working.version == version ? nil : (version, working.version),
            causes: causes)
    }

    /// Runs `attempt` holding exclusive access, again while it returns nil
    /// (it lost the compare-and-swap: someone wrote without the lock since
    /// it read), at most the backend's ``StorageTuning/maxWriteAttempts``
    /// times.
    func committing<Value>(_ operation: String, _ attempt: () throws -> Value?) throws -> Value {
        try storage.withExclusiveAccess {
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

    /// Commits `working` over `base`, read at `revision`, in one write,
    /// numbering each of `entries`: prepares the document, then writes and
    /// publishes it. nil when the compare-and-swap was lost. Holding
    /// exclusive access.
    func commit(
        _ working: MutablePreferences, over base: PreferencesSnapshot,
        adding entries: [PendingEntry], ifRevision revision: StorageRevision
    ) throws -> StorageRevision? {
        var archived = false
        let prepared = try prepareWrite(
            of: working, over: base, adding: entries, changedKeys: nil, archived: &archived)
        return try write(prepared, ifRevision: revision)
    }

    /// The document that commits `working` over `base`, and its bytes: the
    /// changed keys stamped now, the next sequence number and an entry for
    /// each of `entries` (no secret's values), the temporary values stored.
    /// Holding exclusive access, before the write: older entries go to the
    /// archive first (once per attempt: `archived`), and a file holding
    /// secrets is made private; the change and its entry are one write.
    func prepareWrite(
        of working: MutablePreferences, over base: PreferencesSnapshot,
        adding entries: [PendingEntry], changedKeys: [String]?, archived: inout Bool
    ) throws -> PreparedWrite {
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
        // The last file written, while it is what the store holds.
        let last = state.withLock {
            $0.current.revision == $0.edits.lastFile?.revision ? $0.edits.lastFile?.file : nil
        }
        let file = try document.encode(
            file: storage.location, limits: limits,
            after: base.document.temporary.isEmpty && document.temporary.isEmpty ? last : nil,
            changedKeys: changedKeys)
        return PreparedWrite(document: document, file: file)
    }

    /// Writes `prepared` if the storage is still at `revision`, and
    /// publishes it (`knownChanged`: without comparing it to the current
    /// state); nil when the compare-and-swap was lost.
    func write(
        _ prepared: PreparedWrite, ifRevision revision: StorageRevision,
        knownChanged: Bool = false
    ) throws -> StorageRevision? {
        guard let written = try storage.write(prepared.file.bytes, ifRevision: revision) else {
            return nil
        }
        publish(prepared.document, revision: written, knownChanged: knownChanged)
        state.withLock { $0.edits.lastFile = (written, prepared.file) }
        return written
    }
}
