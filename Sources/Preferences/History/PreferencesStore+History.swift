#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The history kept of a store's changes, as of one moment.
public struct StoreHistory: Sendable, Equatable {
    /// The entries asked for, oldest first.
    public var entries: [HistoryEntry]
    /// The sequence number of the store's last change.
    public var latest: Int64
    /// The oldest entry kept of all (not only of those asked for), or nil
    /// when none is kept.
    public var oldestKept: Int64?
    /// Where the histories of this store's earlier lives are kept — before
    /// its document was deleted, reset after corruption or replaced by
    /// another copy —, oldest first. They are never part of ``entries``.
    public var earlierHistories: [String] = []
}

/// Reading the history, undoing a change, and going back to an earlier state
/// (H5, <doc:HistoryAndUndo>).
extension PreferencesStore {
    /// The changes kept, oldest first: all of them, or those that touched
    /// any of `keys`, those after `sequence`, and those made at or after
    /// `date`.
    ///
    /// ```swift
    /// let recent = try await store.history(for: ["max_connections"])
    /// for entry in recent.entries.reversed() { print(entry) }
    /// ```
    public func history(
        for keys: [String] = [], after sequence: Int64? = nil, since date: Date? = nil
    ) async throws -> StoreHistory {
        try checkOpen()
        let kept = try await core.queue.run { try self.core.keptHistory() }
        let wanted = Set(keys)
        return StoreHistory(
            entries: kept.entries.filter { entry in
                (sequence.map { entry.sequence > $0 } ?? true)
                    && (date.map { entry.date >= $0 } ?? true)
                    && (wanted.isEmpty || entry.changes.keys.contains(where: wanted.contains))
            }, latest: kept.sequence, oldestKept: kept.entries.first?.sequence,
            earlierHistories: kept.earlier)
    }

    /// Puts back the values the change numbered `sequence` replaced, for
    /// each key it touched, as a new change; returns that change's sequence
    /// number, or nil when the keys already hold those values.
    ///
    /// When one of the keys changed again after that change, nothing is
    /// written and ``PreferencesError/conflict(keys:reason:)`` names them,
    /// unless `force` is true: then the old values are put back anyway.
    ///
    /// ```swift
    /// try await store.revert(412)
    /// ```
    ///
    /// - Throws: ``PreferencesError/historyUnavailable(sequence:oldestKept:)``
    ///   when the history no longer holds the change,
    ///   ``PreferencesError/changeNotMade(sequence:lastMade:)`` when it has
    ///   not been made.
    @discardableResult
    public func revert(_ sequence: Int64, force: Bool = false) async throws -> Int64? {
        try checkOpen()
        let core = self.core
        return try await core.edit { prefs -> Int64? in
            let kept = try core.keptHistory(carried: prefs.baseHistory)
            guard sequence >= 1 else {
                throw PreferencesError.changeNotMade(sequence: sequence, lastMade: kept.sequence)
            }
            try Self.checkMade(sequence, latest: kept.sequence)
            guard let entry = kept.entries.first(where: { $0.sequence == sequence }) else {
                throw PreferencesError.historyUnavailable(
                    sequence: sequence, oldestKept: kept.entries.first?.sequence)
            }
            let secret = entry.keys.filter { entry.changes[$0]!.secret }
            if !secret.isEmpty {
                throw PreferencesError.conflict(
                    keys: secret,
                    reason:
                        "change #\(sequence) cannot be reverted: the history does not keep the values of these secret keys"
                )
            }
            let tooLarge = entry.keys.filter { entry.changes[$0]!.oldSize != nil }
            if !tooLarge.isEmpty {
                throw PreferencesError.conflict(
                    keys: tooLarge,
                    reason:
                        "change #\(sequence) cannot be reverted: the history keeps only the size of these keys' old values"
                )
            }
            let changedSince = entry.keys.filter { key in
                let change = entry.changes[key]!
                return change.newSize != nil || prefs[raw: key] != change.new
            }
            if !changedSince.isEmpty && !force {
                throw PreferencesError.conflict(
                    keys: changedSince,
                    reason: "change #\(sequence) cannot be reverted: these keys changed since")
            }
            var changed = false
            for key in entry.keys where prefs[raw: key] != entry.changes[key]!.old {
                prefs[raw: key] = entry.changes[key]!.old
                changed = true
            }
            guard changed else { return nil }
            prefs.attribute(to: "revert #\(sequence)")
            return prefs.baseHistory.sequence + 1
        }
    }

    /// Makes the store hold what it held right after the change numbered
    /// `sequence` (0: before any change), as one new change; returns that
    /// change's sequence number, or nil when the store holds it already.
    ///
    /// ```swift
    /// try await store.restore(to: 400)
    /// ```
    ///
    /// - Throws: ``PreferencesError/historyUnavailable(sequence:oldestKept:)``
    ///   when the history no longer holds every change after `sequence`.
    @discardableResult
    public func restore(to sequence: Int64) async throws -> Int64? {
        try checkOpen()
        let core = self.core
        return try await core.edit { prefs -> Int64? in
            let kept = try core.keptHistory(carried: prefs.baseHistory)
            let target = try Self.state(
                at: sequence, kept: kept, values: prefs.values,
                version: prefs.version)
            guard target.values != prefs.values || target.version != prefs.version else {
                return nil
            }
            prefs.values = target.values
            prefs.version = target.version
            prefs.attribute(to: "restore to #\(sequence)")
            return prefs.baseHistory.sequence + 1
        }
    }

    /// Restores, as `restore(to:)` with a sequence does, the state at
    /// `date`: after the last change made at or before it.
    @discardableResult
    public func restore(to date: Date) async throws -> Int64? {
        try await restore(to: try await sequence(at: date))
    }

    /// What `restore(to:)` would change, key by key, without changing
    /// anything: each key whose value differs, with its value now (`old`)
    /// and then (`new`).
    public func restoreDifference(to sequence: Int64) async throws -> [String: HistoryEntry
        .KeyChange]
    {
        try checkOpen()
        let core = self.core
        return try await core.queue.run {
            let kept = try core.keptHistory()
            let snapshot = core.snapshot
            let target = try Self.state(
                at: sequence, kept: kept, values: snapshot.values, version: snapshot.version)
            return StoreCore.changes(from: snapshot.values, to: target.values, keys: nil)
        }
    }

    /// The sequence of the last change made at or before `date`; 0 when the
    /// history kept starts with the store's first change and `date` is
    /// before it.
    ///
    /// - Throws: ``PreferencesError/historyUnavailable(sequence:oldestKept:)``
    ///   when `date` is before the oldest entry kept.
    public func sequence(at date: Date) async throws -> Int64 {
        let kept = try await history()
        if let last = kept.entries.last(where: { $0.date <= date }) { return last.sequence }
        if kept.oldestKept == 1 || kept.latest == 0 { return 0 }
        throw PreferencesError.historyUnavailable(sequence: 0, oldestKept: kept.oldestKept)
    }

    /// Fails with ``PreferencesError/changeNotMade(sequence:lastMade:)`` for
    /// a change that has not been made (a sequence past the latest, or
    /// negative).
    static func checkMade(_ sequence: Int64, latest: Int64) throws {
        guard sequence >= 0, sequence <= latest else {
            throw PreferencesError.changeNotMade(sequence: sequence, lastMade: latest)
        }
    }

    /// The values and version right after change `sequence`: the current
    /// ones with every later change undone, newest first.
    static func state(
        at sequence: Int64, kept: StoreCore.KeptHistory,
        values: [String: PreferenceValue], version: Int
    ) throws -> (values: [String: PreferenceValue], version: Int) {
        try checkMade(sequence, latest: kept.sequence)
        let later = kept.entries.filter { $0.sequence > sequence }
        // Every change after `sequence` must be kept to be undone.
        let expected = kept.sequence - sequence
        guard later.count == expected,
            later.first.map({ $0.sequence == sequence + 1 }) ?? true
        else {
            throw PreferencesError.historyUnavailable(
                sequence: sequence, oldestKept: kept.entries.first?.sequence)
        }
        let secret = Set(later.flatMap { entry in entry.keys.filter { entry.changes[$0]!.secret } })
        if !secret.isEmpty {
            throw PreferencesError.conflict(
                keys: secret.sorted(),
                reason:
                    "the state after #\(sequence) cannot be restored: the history does not keep the values of these secret keys"
            )
        }
        let tooLarge = Set(
            later.flatMap { entry in entry.keys.filter { entry.changes[$0]!.oldSize != nil } })
        if !tooLarge.isEmpty {
            throw PreferencesError.conflict(
                keys: tooLarge.sorted(),
                reason:
                    "the state after #\(sequence) cannot be restored: the history keeps only the size of these keys' old values"
            )
        }
        var values = values
        var version = version
        for entry in later.reversed() {
            for (key, change) in entry.changes { values[key] = change.old }
            if let versionChange = entry.versionChange { version = versionChange.old }
        }
        return (values, version)
    }
}
