/// What is wrong but did not stop a store (``PreferencesStore/problems``):
/// a stored value of the wrong type (S7, <doc:StoreGuarantees>), a corrupt
/// document written by someone else (C6, <doc:ObservingChanges>), where the
/// corruption policy moved a bad document (S8), an interrupted watch, a
/// migration's clean-up that failed, notes left by edits, a manifest that
/// could not be published.
///
/// Each source keeps its own list, replaced when that source has news, so
/// one source clearing its problems never hides another's.
struct ProblemLog: Sendable {
    /// Values that did not decode as their key's type, by key; dropped when
    /// the key's stored value changes.
    var mismatches: [String: PreferencesProblem] = [:]
    /// The last reload's failure (a corrupt document, an I/O error).
    var file: [PreferencesProblem] = []
    /// Where the corruption policy moved a bad document. Listed for as long
    /// as the store stays open, whatever is read later: the moved bytes
    /// wait for someone to look at them.
    var recovery: [PreferencesProblem] = []
    /// Set while the backend reports its watch interrupted.
    var watch: PreferencesProblem?
    /// Reports of the migrations run at open, and clean-ups that failed.
    var migration: [PreferencesProblem] = []
    /// Notes left by committed edits (``MutablePreferences/report(_:key:)``),
    /// the latest ``maxEditReports``.
    var editReports: [PreferencesProblem] = []
    /// Why the key manifest could not be published.
    var manifest: [PreferencesProblem] = []
    /// Why this process is not registered as a replica, while its
    /// registration is being tried again.
    var registration: PreferencesProblem?

    /// Who is told when the list changes, and what they were last told.
    var watchers: [UInt64: @Sendable ([PreferencesProblem], UInt64) -> Void] = [:]
    var lastWatcherID: UInt64 = 0
    var sequence: UInt64 = 0
    var notified: [PreferencesProblem]?

    /// How many notes left by edits the log keeps (the latest).
    static let maxEditReports = 100

    /// Every problem, in a stable order: recoveries, the file, the watch,
    /// migrations, edits, the manifest, the registration, then mismatches
    /// by key.
    var all: [PreferencesProblem] {
        recovery + file + (watch.map { [$0] } ?? []) + migration + editReports + manifest
            + (registration.map { [$0] } ?? [])
            + mismatches.keys.sorted().compactMap { mismatches[$0] }
    }

    /// Drops the mismatches of the keys for which `changed` is true.
    mutating func forgetMismatches(where changed: (String) -> Bool) {
        mismatches = mismatches.filter { key, _ in !changed(key) }
    }

    /// Adds notes left by committed edits, keeping the latest ``maxEditReports``.
    mutating func keep(_ reports: [PreferencesProblem]) {
        editReports.append(contentsOf: reports)
        let excess = editReports.count - Self.maxEditReports
        if excess > 0 { editReports.removeFirst(excess) }
    }
}

extension StoreCore {
    var problems: [PreferencesProblem] {
        state.withLock { $0.problems.all }
    }

    /// Changes the state under its lock, then tells the problem watchers
    /// if the problems changed: every change to ``State/problems`` is made
    /// through here, so none goes unnoticed.
    @discardableResult
    func changeProblems<Result>(_ change: (inout State) throws -> Result) rethrows -> Result {
        defer { notifyProblemWatchers() }
        return try state.withLock(change)
    }

    /// Notes that the stored value of `key` did not decode as the key's type.
    func reportMismatch(key: String, error: PreferencesError) {
        changeProblems { state in
            state.problems.mismatches[key] = PreferencesProblem(
                key: key, message: error.description)
        }
    }

    /// Notes a record field that did not decode. Filed under the top-level
    /// key, so the problem is dropped when that key's stored value changes.
    func reportRecordProblem(field: String, _ problem: PreferencesProblem) {
        changeProblems { $0.problems.mismatches[field] = problem }
    }

    /// Lists notes left by committed edits among the problems.
    func keep(_ reports: [PreferencesProblem]) {
        changeProblems { $0.problems.keep(reports) }
    }

    /// Tells problem watchers about the current problems if they changed
    /// since the last notice. Cheap when nobody watches.
    private func notifyProblemWatchers() {
        let delivery = state.withLock {
            state -> (
                [PreferencesProblem], UInt64, [@Sendable ([PreferencesProblem], UInt64) -> Void]
            )? in
            guard !state.problems.watchers.isEmpty else { return nil }
            let current = state.problems.all
            if state.problems.notified == current { return nil }
            state.problems.notified = current
            state.problems.sequence += 1
            return (current, state.problems.sequence, Array(state.problems.watchers.values))
        }
        guard let (problems, sequence, watchers) = delivery else { return }
        for watcher in watchers { watcher(problems, sequence) }
    }

    /// Registers a problem watcher; it receives the current problems at once.
    /// Each delivery carries a sequence number so late ones can be ignored.
    func watchProblems(
        _ deliver: @escaping @Sendable ([PreferencesProblem], UInt64) -> Void
    ) -> UInt64 {
        let (id, current, sequence) = state.withLock { state in
            state.problems.lastWatcherID += 1
            let id = state.problems.lastWatcherID
            state.problems.watchers[id] = deliver
            return (id, state.problems.all, state.problems.sequence)
        }
        deliver(current, sequence)
        return id
    }

    func stopWatchingProblems(_ id: UInt64) {
        state.withLock { state in
            state.problems.watchers[id] = nil
            if state.problems.watchers.isEmpty { state.problems.notified = nil }
        }
    }
}
