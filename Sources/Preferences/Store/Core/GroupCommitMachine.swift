/// An edit a group commit applies: a transform of the working state whose
/// result goes back to its caller.
protocol GroupCommitEdit {
    func apply(to working: inout MutablePreferences) throws -> any Sendable
}

/// The rules of one group commit (S4, S5, <doc:StoreGuarantees>), as a
/// value: the batch of edits, each edit's outcome, the working state they
/// make, and the two budgets that bound how long edits queued meanwhile may
/// hold the write back. It does no I/O: each of its methods takes what the
/// store's write loop saw and returns what the loop does next, until
/// ``Action/finish`` or ``Action/fallBack``.
///
/// One attempt runs as follows. ``start(over:limits:)`` applies the batch to
/// the state just read. While the late-take budget lasts (``maxLateTakes``
/// looks at the queue per encoding), the loop takes the edits queued since
/// and ``take(late:)`` applies them. An attempt whose edits change nothing
/// finishes without writing. Otherwise the loop encodes the document;
/// edits queued while it encoded join the batch and the document is
/// encoded again, at most ``maxReencodes`` times in the whole commit (each
/// re-encoding gives the late-take budget back). Then the loop writes: a
/// lost compare-and-swap starts a new attempt over the state read again,
/// which applies the whole batch again. A commit that took no late edits
/// (``init(_:takingLateEdits:)``) never looks at the queue.
///
/// A commit that fails with ``PreferencesError/limitExceeded(file:reason:)``
/// while it holds more than one edit falls back to one write per edit, so
/// only the edit whose result is too large fails; any other failure fails
/// every edit that had succeeded.
struct GroupCommitMachine<Edit: GroupCommitEdit> {
    /// What the loop does next.
    enum Action: Equatable {
        /// Take the edits queued since the batch was taken, and pass them
        /// (maybe none) to ``take(late:)``.
        case takeLateEdits
        /// Build and encode the document for ``working`` over ``base``,
        /// whose changed keys are these (nil: compare them all), then call
        /// ``encoded()``.
        case encode(changedKeys: [String]?)
        /// Write the encoded document if the storage is still at the
        /// revision read, then call ``wrote(_:)``.
        case write
        /// The write lost its compare-and-swap: read the state again and
        /// call ``start(over:limits:)`` (the backend's attempt limit applies).
        case readAgain
        /// The commit is over: ``outcomes`` holds each edit's result.
        case finish
        /// Commit each edit of ``batch`` on its own, without late edits.
        case fallBack
    }

    /// How many times a commit encodes its document again to take in edits
    /// queued while it was encoding.
    static var maxReencodes: Int { 2 }

    /// How many times a commit takes in edits queued while it applied the
    /// ones it had, before each encoding.
    static var maxLateTakes: Int { 8 }

    /// The edits, in the order queued: the batch taken, then late edits.
    private(set) var batch: [Edit]
    /// Each edit's result, by index in ``batch``.
    private(set) var outcomes: [Result<any Sendable, any Error>]
    /// The state this attempt's edits started from.
    private(set) var base = PreferencesSnapshot()
    /// The state after this attempt's edits.
    private(set) var working = MutablePreferences(snapshot: PreferencesSnapshot(), limits: .init())
    private let takesLateEdits: Bool
    /// Re-encodings so far, over every attempt.
    private var reencodes: Int
    /// Looks at the queue since the last encoding (or the attempt's start).
    private var lateTakes = 0
    /// How many edits of ``batch`` this attempt has applied.
    private var applied = 0
    /// Whether an encoding is waiting for late edits to be looked for.
    private var encoding = false

    /// A commit of `batch`; with `takingLateEdits`, edits queued while it
    /// is prepared join it.
    init(_ batch: [Edit], takingLateEdits: Bool) {
        self.batch = batch
        outcomes = Array(repeating: .success(()), count: batch.count)
        takesLateEdits = takingLateEdits
        reencodes = takingLateEdits ? 0 : Self.maxReencodes
    }

    /// The notes the batch's edits left (for ``PreferencesStore/problems``).
    var reports: [PreferencesProblem] { working.reports }

    /// Starts an attempt over `base`, the state as read now: applies the
    /// whole batch to it.
    mutating func start(over base: PreferencesSnapshot, limits: PreferencesLimits) -> Action {
        self.base = base
        working = MutablePreferences(snapshot: base, limits: limits)
        applied = 0
        lateTakes = takesLateEdits ? 0 : Self.maxLateTakes
        encoding = false
        return applyNewEdits()
    }

    /// Takes in `late`, the edits queued since the last look: they join the
    /// batch. After an encoding, they make the document stale.
    mutating func take(late: [Edit]) -> Action {
        batch.append(contentsOf: late)
        outcomes.append(
            contentsOf: repeatElement(
                .success(()) as Result<any Sendable, any Error>, count: late.count))
        if encoding {
            encoding = false
            if late.isEmpty { return .write }
            reencodes += 1
            lateTakes = 0
            return applyNewEdits()
        }
        if late.isEmpty { return decideEncoding() }
        lateTakes += 1
        return applyNewEdits()
    }

    /// The document is encoded: it is written unless edits queued meanwhile
    /// are to join it first.
    mutating func encoded() -> Action {
        guard reencodes < Self.maxReencodes else { return .write }
        encoding = true
        return .takeLateEdits
    }

    /// The write is over: durable, or (`succeeded` false) refused because
    /// someone wrote since the state was read.
    mutating func wrote(_ succeeded: Bool) -> Action {
        if succeeded { return .finish }
        // The outcomes were worked out on a state that was never written:
        // the next attempt works them out again, and a failure before it
        // (reading the state again, the attempts running out) fails every
        // edit with its own error, never with one from the state given up.
        outcomes = Array(repeating: .success(()), count: outcomes.count)
        return .readAgain
    }

    /// The commit failed with `error`: each edit that had succeeded fails
    /// with it, unless a result too large for one write falls back to one
    /// write per edit.
    mutating func failed(_ error: any Error) -> Action {
        if case PreferencesError.limitExceeded = error, batch.count > 1 { return .fallBack }
        for index in outcomes.indices where (try? outcomes[index].get()) != nil {
            outcomes[index] = .failure(error)
        }
        return .finish
    }

    /// Applies the edits not applied yet, each alone: one that throws (or
    /// whose setters failed) is undone, and the next sees the state without it.
    private mutating func applyNewEdits() -> Action {
        for index in applied..<batch.count {
            working.beginTransform()
            do {
                let value = try batch[index].apply(to: &working)
                if let failure = working.failure { throw failure }
                working.endTransform()
                outcomes[index] = .success(value)
            } catch {
                working.rollBackTransform()
                outcomes[index] = .failure(error)
            }
        }
        applied = batch.count
        if lateTakes < Self.maxLateTakes { return .takeLateEdits }
        return decideEncoding()
    }

    /// With no late edit to take: encode, or finish when nothing changed.
    private func decideEncoding() -> Action {
        // The keys whose value differs from `base`, from the few the batch
        // changed, where it knows them: then neither the check below nor the
        // change records compare every value.
        let changedKeys = working.changedKeys.map { keys in
            keys.filter { working.values[$0] != base.values[$0] }
        }
        // S5: an edit that changes nothing writes nothing.
        if working.version == base.version
            && (!working.changed
                || (changedKeys.map(\.isEmpty) ?? (working.values == base.values)))
            && !StoreCore.changesTemporaryValues(base: base, working: working)
        {
            return .finish
        }
        return .encode(changedKeys: changedKeys)
    }
}
