import Preferences

/// `prefs restore --to SEQ|TIME [--dry-run]`: makes the store hold what it
/// held right after change SEQ, or at TIME, as one new change.
///
/// Prints `restored to #SEQ as #NEW`, or that the store holds that state
/// already. `--dry-run` prints instead, for each key that would change,
/// `KEY: OLD → NEW` (values as compact JSON, `(unset)` for a key that is
/// or would be absent), sorted by key, and writes nothing.
struct RestoreCommand: PrefsCommand {
    static let name = "restore"
    static let to = ValueOption<Self>(
        "--to", "SEQ|TIME",
        help: "The state right after change SEQ (0: before any), or as it was at TIME (ISO 8601).",
        required: true)
    static let dryRun = Flag<Self>(
        "--dry-run", help: "Print what would change, one KEY: OLD → NEW line a key; write nothing.")
    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let options: [any OptionDeclaration] = [to, dryRun, wait]
    static let readsManifest = false
    static let help = CommandHelp(
        summary: "Go back to an earlier state, as a new change.",
        discussion: """
            Makes the store hold what it held right after change SEQ (see 'prefs \
            log'; 0 is the state before any change), or at TIME: an ISO 8601 time \
            such as 2026-12-02T03:12:09Z, meaning after the last change made at or \
            before it. Every change after that one is undone in one new change, \
            and the command prints 'restored to #SEQ as #NEW'; when the store \
            holds that state already it writes nothing and says so. --dry-run \
            prints, for each key that would change, 'KEY: OLD → NEW' sorted by key \
            (values as compact JSON, (unset) for a key that is not or would not be \
            set), prints nothing when nothing would change, and writes nothing. A \
            state older than the history kept exits with status 3, naming the \
            oldest change kept. The values of secret keys are shown as \
            <redacted> unless --reveal is given (the history does not keep them, \
            so a change of a secret cannot be restored).
            """,
        examples: [
            ("restore --to 400 --dry-run", "prints: max_connections: 1000 → 100"),
            ("restore --to 400", "prints: restored to #400 as #415"),
            ("restore --to 2026-12-02T03:00:00Z", "the state at that time"),
        ])

    let target: HistoryPoint
    /// `--to` as given, for messages.
    let targetText: String
    let dryRun: Bool
    let wait: Duration?

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        // Required: the parser has made sure it was given.
        guard let text = parsed[Self.to] else {
            throw .usage("missing \(Self.to.spec.synopsis)", usage: Self.self)
        }
        target = try HistoryPoint.parse(text, option: Self.to.spec, command: Self.self)
        targetText = text
        dryRun = parsed[Self.dryRun]
        wait = try ReplicaWait.timeout(parsed[Self.wait])
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        let sequence = try await resolvedSequence(store)
        if dryRun {
            let difference = try await store.restoreDifference(to: sequence)
            let lines = difference.keys.sortedByBytes().map { key in
                let change = difference[key]!
                let secrets = context.secrets
                return
                    "\(key): \(secrets.text(change.old, forKey: key)) → \(secrets.text(change.new, forKey: key))\n"
            }
            if !lines.isEmpty { context.output.standardOutput(lines.joined()) }
        } else if let change = try await store.restore(to: sequence) {
            context.output.print("restored to #\(sequence) as #\(change)")
            try await ReplicaWait.afterWrite(store, timeout: wait, output: context.output)
        } else {
            context.output.print("nothing to restore: the store holds that state")
        }
    }

    /// The sequence number of the target: as given, or that of the last
    /// change made at or before the time.
    private func resolvedSequence(_ store: PreferencesStore) async throws -> Int64 {
        switch target {
        case .sequence(let sequence):
            return sequence
        case .time(let date):
            do {
                return try await store.sequence(at: date)
            } catch PreferencesError.historyUnavailable(_, let oldest) {
                // The library names change #0; say which time is out of reach.
                let kept = oldest.map { "the oldest kept is #\($0)" } ?? "it keeps no entries"
                throw CommandFailure(
                    .invalidValue,
                    "the history kept does not reach back to \(targetText) (\(kept))")
            }
        }
    }

    /// A value as compact JSON, or `(unset)`.
    static func shown(_ value: PreferenceValue?) -> String {
        value?.jsonText ?? "(unset)"
    }
}
