#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Numbered changes and their history entries (H1–H4, <doc:HistoryAndUndo>).
///
/// Every write that commits a change gives it the document's next sequence
/// number and an entry, in the same document: the change and its entry are
/// one write, so neither is ever on disk without the other. A backend with
/// a ``HistoryArchive`` takes the document's older entries before the write
/// that would let them pile up, so a write carries a few kilobytes of
/// history at most; one without keeps every entry kept in the document.
extension StoreCore {
    /// How many entries the document carries before they move to the
    /// archive (when the backend has one), and how many bytes of them.
    static let documentHistoryEntries = 16
    static let documentHistoryBytes = 4096

    /// What one committed change gets: its keys' old and new values,
    /// attributed to this process now, with the causes named.
    struct PendingEntry {
        var changes: [String: HistoryEntry.KeyChange]
        var versionChange: (old: Int, new: Int)?
        var causes: [String]
    }

    /// The keys whose value differs between `old` and `new`, with both
    /// values; only `keys` are compared when the caller knows them.
    static func changes(
        from old: [String: PreferenceValue], to new: [String: PreferenceValue], keys: [String]?
    ) -> [String: HistoryEntry.KeyChange] {
        var changes: [String: HistoryEntry.KeyChange] = [:]
        func compare(_ key: String) {
            let (before, after) = (old[key], new[key])
            guard before != after else { return }
            var change = HistoryEntry.KeyChange(old: before, new: after)
            // A large value is kept by its size alone.
            if let size = Self.largeSize(before) {
                change.old = nil
                change.oldSize = size
            }
            if let size = Self.largeSize(after) {
                change.new = nil
                change.newSize = size
            }
            changes[key] = change
        }
        if let keys {
            for key in keys where changes[key] == nil { compare(key) }
        } else {
            for key in old.keys { compare(key) }
            for key in new.keys where old[key] == nil { compare(key) }
        }
        return changes
    }

    /// The size of `value`'s JSON when it is over what an entry keeps.
    static func largeSize(_ value: PreferenceValue?) -> Int? {
        guard let value else { return nil }
        switch value {
        case .null, .bool, .int, .double: return nil
        case .string(let text) where text.utf8.count < HistoryEntry.maxKeptValueBytes / 2:
            return nil
        default:
            let size = value.jsonText.utf8.count
            return size > HistoryEntry.maxKeptValueBytes ? size : nil
        }
    }

    /// Whether a write after `base` keeps history entries: this store's
    /// limit or the one `base` records (the larger of the two) keeps some.
    func keepsHistory(after base: PreferencesSnapshot) -> Bool {
        limits.history.union(base.document.history.keep).keepsEntries
    }

    /// The history the document after `base` carries, with the next
    /// sequence number for each of `pending` (in order) and their entries.
    ///
    /// When the backend has an archive and `base` carries more than
    /// ``documentHistoryEntries`` entries or ``documentHistoryBytes``, they
    /// are appended to it first (once per write attempt: `archived` says it
    /// was done), and the new document carries only the new entries.
    /// Called on the queue, holding exclusive access.
    func history(
        after base: PreferencesSnapshot, adding pending: [PendingEntry],
        stamp: PreferenceModification, secrets: Set<String> = [], archived: inout Bool
    ) throws -> DocumentHistory {
        var history = base.document.history
        let keep = limits.history.union(history.keep)
        // The largest limit any writer asked for stays recorded (H4).
        if keep.keepsEntries && keep != history.keep { history.keep = keep }
        // The first write that keeps entries names the history, which its
        // archive records.
        if history.id == nil && (keep.keepsEntries || !history.carried.isEmpty) {
            history.id = DocumentHistory.id(continuing: history.carried)
        }
        let host = Platform.hostName
        var fresh: [DocumentHistory.Carried] = []
        for var change in pending {
            history.sequence += 1
            guard keep.keepsEntries else { continue }
            // A secret's entry says that it changed, never its values.
            for key in change.changes.keys where secrets.contains(key) {
                change.changes[key] = .secretChange
            }
            fresh.append(
                DocumentHistory.Carried(
                    HistoryEntry(
                        sequence: history.sequence, date: stamp.date, user: stamp.user,
                        sudoUser: stamp.sudoUser, program: stamp.program, host: host,
                        cause: change.causes.isEmpty ? nil : change.causes.joined(separator: "; "),
                        changes: change.changes, versionChange: change.versionChange)))
        }
        let carried = history.carried
        if let archive = storage.historyArchive {
            let bytes = carried.reduce(0) { $0 + $1.text.count }
            if !carried.isEmpty,
                archived
                    || carried.count >= Self.documentHistoryEntries
                    || bytes >= Self.documentHistoryBytes
            {
                if !archived {
                    let place = try archive.append(
                        carried.map { ($0.sequence, $0.text) }, history: history.id!,
                        keep: keep)
                    if let place { history.setAside.append(place) }
                    archived = true
                }
                history.carried = fresh
            } else {
                history.carried = carried + fresh
            }
        } else {
            let all = carried + fresh
            history.carried = Array(all[keep.firstKept(sizes: all.map(\.text.count))...])
        }
        return history
    }

    // MARK: Reading

    /// Every entry kept, oldest first, the sequence they run to, and where
    /// the histories of the store's earlier lives are kept: the archive's
    /// entries and those the current document carries, each sequence once,
    /// within the store's limit. On the queue.
    func keptHistory() throws -> KeptHistory {
        try refreshIfChanged(policy: nil)
        return try keptHistory(carried: state.withLock { $0.current.snapshot.document.history })
    }

    /// The history kept as of one document.
    struct KeptHistory {
        var entries: [HistoryEntry]
        var sequence: Int64
        /// Where the archives of earlier histories are: those moved aside,
        /// and the archive in place when it is of another history.
        var earlier: [String]
    }

    /// Every entry kept as of a document carrying `history`: the archive's
    /// older entries and those the document carries, unless the archive
    /// is of another history (then only the document's), or only those of
    /// the archive's entries the document shares when it is a copy of an
    /// older state. On the queue.
    func keptHistory(carried history: DocumentHistory) throws -> KeptHistory {
        // Each entry with the size of its stored text, which the limit
        // counts as a write does, without writing any
        // entry again.
        var entries: [HistoryEntry] = []
        var sizes: [Int] = []
        var earlier = history.setAside
        if let archive = storage.historyArchive {
            let first = history.carried.first?.sequence ?? history.sequence + 1
            let archived = try archive.read()
            let share = archived.share(
                of: history.id, through: history.sequence,
                carrying: history.carried.map { ($0.sequence, $0.text) })
            if share != .all { earlier.append(archive.location) }
            for text in archived.entries {
                guard let sequence = HistoryEntry.sequence(ofJSONText: text),
                    share.holds(sequence) && (sequence < first)
                        && (sequence > (entries.last?.sequence ?? 0)),
                    let entry = HistoryEntry(jsonText: text, source: storage.location)
                else { continue }
                entries.append(entry)
                sizes.append(text.count)
            }
        }
        for carried in history.carried {
            guard let entry = carried.entry else { continue }
            entries.append(entry)
            sizes.append(carried.text.count)
        }
        let keep = limits.history.union(history.keep)
        return KeptHistory(
            entries: Array(entries[keep.firstKept(sizes: sizes)...]), sequence: history.sequence,
            earlier: earlier)
    }

    // MARK: Secrets

    /// Keeps the document readable by its owner only from this write on
    /// (A3, <doc:ChangingSettingsSafely>), listing a problem when it was
    /// readable by others until now.
    func keepPrivate() throws {
        guard let privacy = storage.privacy, try privacy.keepPrivate() else { return }
        changeProblems { state in
            let message =
                "\(storage.location) holds secret values and was readable by others: it is now readable by its owner only"
            let problem = PreferencesProblem(key: nil, message: message)
            if !state.problems.editReports.contains(problem) {
                state.problems.keep([problem])
            }
        }
    }
}
