#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Opening, reloading and the corruption policy (S8, S17,
/// <doc:StoreGuarantees>).
extension StoreCore {
    /// Loads the document — or, for a further handle on a document already
    /// open in this process, re-reads it if it changed — applying the
    /// opener's corruption policy, then runs `migrations` under that same
    /// policy; on the store's queue. Later reads use the policy of the open
    /// that made the state (S9).
    ///
    /// With `liveReads`, the storage is watched from before the load, so no
    /// write after it is missed, until the returned reader is released.
    func open(
        migrations: [any PreferencesMigration], corruption: CorruptionPolicy, liveReads: Bool
    ) async throws -> LiveReader? {
        let reader = liveReads ? LiveReader(self) : nil
        // The usual open — no migrations, a backend whose reads are local and
        // quick, a valid document — needs no hop to the queue.
        if migrations.isEmpty && storage.tuning.readsAreLocal {
            let opened = queue.runInline { () -> Bool? in
                do {
                    try self.load(policy: corruption, recovering: false)
                } catch let error as PreferencesError {
                    // A corrupt document under a policy that moves it takes
                    // the lock, which may wait: that is the queue's work.
                    if case .corrupted = error, !corruption.failsOnly { return false }
                    throw error
                }
                return true
            }
            switch opened {
            case .success(true)?:
                return reader
            case .failure(let error)?:
                throw error
            default:
                break
            }
        }
        return try await queue.run {
            try self.load(policy: corruption)
            if !migrations.isEmpty { try self.migrate(migrations, policy: corruption) }
            return reader
        }
    }

    /// Reads the document unless it is loaded and unchanged. Without
    /// `recovering`, a corrupt document throws whatever the policy: the
    /// caller applies it later, on the queue.
    func load(policy: CorruptionPolicy, recovering: Bool = true) throws {
        let (loaded, known) = state.withLock { ($0.current.loaded, $0.current.revision) }
        if loaded, try storage.currentRevision() == known { return }
        let contents = try storage.read()
        let document: StoreDocument
        do {
            document = try decode(contents)
        } catch let error as PreferencesError {
            // With `.fail` nothing is touched, not even the lock file.
            guard case .corrupted = error else { throw error }
            if case .fail = policy.action { throw error }
            if !recovering { throw error }
            // A backend without a lock may see the document change under
            // the recovery (which then changes nothing): read again.
            try committing("recover") { () -> Void? in
                // Someone may have repaired or replaced the document meanwhile.
                let again = try storage.read()
                do {
                    publish(try decode(again), revision: again.revision)
                    return ()
                } catch let error as PreferencesError {
                    guard case .corrupted = error else { throw error }
                    return try recover(from: error, contents: again, policy: policy)
                }
            }
            state.withLock { $0.current.loaded = true }
            return
        }
        publish(document, revision: contents.revision)
        state.withLock { $0.current.loaded = true }
    }

    func decode(_ contents: StoredContents) throws -> StoreDocument {
        guard let bytes = contents.bytes else { return StoreDocument() }
        return try StoreDocument.decode(bytes, file: storage.location, limits: limits)
    }

    /// Applies a corruption policy to the corrupt `contents`, and publishes
    /// the fresh start; called holding exclusive access. nil when the
    /// document changed meanwhile (a backend without a lock): nothing was
    /// moved, or what was written after the move stands, and the caller
    /// reads again.
    private func recover(
        from error: PreferencesError, contents: StoredContents, policy: CorruptionPolicy
    ) throws -> Void? {
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
        // open would reject must not cost the bad document its place.
        for key in replacement.keys {
            if let problem = limits.problem(withKey: key) {
                throw PreferencesError.invalidKey(
                    key: key, reason: "in the replacement values: \(problem)")
            }
        }
        // The reset is a change like any other: the first of a new history,
        // with its own entry saying where the bad bytes went. It is prepared
        // once before anything moves, so that a replacement the next open
        // would reject never costs the bad document its place.
        let base = PreferencesSnapshot(StoreDocument(), registeredDefaults: [:])
        var working = MutablePreferences(snapshot: base, limits: limits)
        for (key, value) in replacement { working[raw: key] = value }
        var archived = false
        _ = try prepareWrite(
            of: working, over: base, adding: [entry(.reset(movedTo: ""), to: working, over: base)],
            changedKeys: nil, archived: &archived)
        guard let place = try storage.setAsideCorrupt(contents, stamp: Self.timestamp()) else {
            return nil
        }
        changeProblems {
            $0.problems.recovery.append(
                PreferencesProblem(
                    key: nil, message: "\(error.description); the file was moved to \(place)"))
        }
        // Someone wrote after the bad bytes were moved aside: theirs stands.
        let reset = entry(.reset(movedTo: place), to: working, over: base)
        guard try commit(working, over: base, adding: [reset], ifRevision: .absent) != nil else {
            return nil
        }
        return ()
    }

    /// Now in UTC, to the second, without separators: `20261202T031209Z`.
    static func timestamp() -> String { ISO8601.compactStamp() }

    // MARK: Reloading

    /// Re-reads the storage if its revision moved; called on the queue.
    /// With a `policy`, a corrupt document goes through it (the caller holds
    /// exclusive access); without, it is reported and the last good state
    /// kept (C6, <doc:ObservingChanges>).
    func refreshIfChanged(policy: CorruptionPolicy?) throws {
        let known = state.withLock { $0.current.revision }
        guard try storage.currentRevision() != known else { return }
        try apply(try storage.read(), policy: policy)
    }

    /// Publishes read `contents`, or applies `policy` (or C6) when they are corrupt.
    func apply(_ contents: StoredContents, policy: CorruptionPolicy?) throws {
        do {
            let document = try decode(contents)
            changeProblems { $0.problems.file = [] }
            publish(document, revision: contents.revision)
        } catch let error as PreferencesError {
            guard case .corrupted = error else { throw error }
            if let policy {
                guard try recover(from: error, contents: contents, policy: policy) != nil else {
                    // Changed under the recovery: take whatever is there now.
                    return try refreshIfChanged(policy: policy)
                }
            } else {
                changeProblems {
                    $0.problems.file = [
                        PreferencesProblem(
                            key: nil, message: "\(error.description); keeping the last good values")
                    ]
                }
                throw error
            }
        }
    }

    /// How long a write waits, in total, for a document that turned corrupt
    /// after it was loaded to become valid again: the pauses between the
    /// write's re-reads (10, 20, 40 and 80 ms, five reads over about 150 ms).
    static let corruptRereadPauses: [TimeInterval] = [0.010, 0.020, 0.040, 0.080]

    /// The re-read before a write, holding exclusive access (S17,
    /// <doc:StoreGuarantees>).
    ///
    /// A document that is corrupt now but was valid when loaded is most
    /// likely being saved in place by a program that ignores the lock (an
    /// editor half-way through its write), so the corruption policy — which
    /// only runs when a store is opened — does not apply: the re-read is
    /// retried a few times (``corruptRereadPauses``), then the write fails
    /// with ``PreferencesError/corrupted(file:reason:)``, leaving the bytes
    /// as they are and the last good state in memory. The pauses block the
    /// store's own dispatch queue, never the calling task.
    func refreshBeforeWrite() throws {
        var pauses = Self.corruptRereadPauses[...]
        while true {
            do {
                try refreshIfChanged(policy: nil)
                return
            } catch let error as PreferencesError {
                guard case .corrupted = error else { throw error }
                guard let pause = pauses.popFirst() else { throw error }
                sleepThread(seconds: pause)
            }
        }
    }

    /// Re-reads the storage now (for callers without a change feed).
    func reload() async throws {
        try await queue.run { try self.refreshIfChanged(policy: nil) }
    }
}
