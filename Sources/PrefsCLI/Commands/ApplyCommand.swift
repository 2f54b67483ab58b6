import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `prefs apply FILE [--dry-run] [--prune]`: makes the store hold the
/// values FILE holds, in one change (its row in the commands table of
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
///
/// FILE is read as `diff` reads it. Every value is checked against the key
/// manifest in force (as `set` finds it: `--manifest`, `$PREFS_MANIFEST`,
/// the published one) before the store is opened: when any value does not
/// fit, nothing is written and one error line names every key that failed,
/// each with its reason (status 3). Then the store applies the difference,
/// computed under its lock on the state it replaces, as one change (one
/// write, one history entry attributed to `apply`), and the command prints
/// `applied N changes as #SEQ`, or `nothing to apply: …` when the store
/// already holds the values (nothing is written then). `--dry-run` checks
/// the same, prints `diff`'s lines instead and writes nothing.
struct ApplyCommand: PrefsCommand {
    static let name = "apply"
    static let arguments = CommandArguments("FILE", 1...1, completing: [.files])
    static let dryRun = Flag<Self>(
        "--dry-run", help: "Print what would change, one KEY: OLD → NEW line a key; write nothing.")
    static let prune = Flag<Self>(
        "--prune", help: "Also remove the stored keys FILE does not name.")
    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let force = Flag<Self>(
        "--force",
        help: "Apply values that another program's or a running replica's key manifest refuses.")
    static let options: [any OptionDeclaration] = [dryRun, prune, wait, force]
    static let help = CommandHelp(
        summary: "Make the store hold the values in a file, in one change.",
        discussion: """
            FILE holds the values the store should hold: a JSON object of key → \
            value, or a whole store file (an object with "format" and "values"; \
            its values are taken). Every value is first checked against the key \
            manifest (as for 'prefs set'); when any does not fit its type, range \
            or allowed values, nothing is written and the command exits with \
            status 3, naming every key that failed on one line. Otherwise every \
            key whose stored value differs is set, in one change (one write, one \
            entry in 'prefs log'), and the command prints 'applied N changes as \
            #SEQ'; when the store already holds the values it writes nothing and \
            says so. Keys FILE does not name are left alone unless --prune is \
            given, which removes them in the same change. --dry-run checks the \
            same, prints what would change as 'prefs diff' does, and writes \
            nothing. A FILE that is \
            not JSON or not an object is status 4, naming the file, line and \
            column.
            """,
        examples: [
            ("apply desired.json", "prints: applied 3 changes as #42"),
            ("apply desired.json --dry-run", "prints: max_connections: 100 → 1000"),
            ("apply backup.json --prune", "the store holds exactly the file's values"),
            ("--file other.json apply prefs.json", "copies a store's values into another"),
        ])

    let file: URL
    let dryRun: Bool
    let prune: Bool
    let wait: Duration?
    let force: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        file = URL(fileURLWithPath: parsed.arguments[0])
        dryRun = parsed[Self.dryRun]
        prune = parsed[Self.prune]
        wait = try ReplicaWait.timeout(parsed[Self.wait])
        force = parsed[Self.force]
    }

    func run(_ context: CommandContext) async throws {
        let desired = try DiffCommand.desiredValues(in: file)
        for (key, value) in desired { context.secrets.remember(value, forKey: key) }
        try Self.check(desired, against: context.manifest, file: file)
        let store = try await context.openStore()
        if dryRun {
            DiffCommand.print(store.difference(to: desired, prune: prune), to: context)
            return
        }
        if !force {
            for key in desired.keys.sortedByBytes() {
                let value = desired[key]!
                if let problem = PreferencesManifest.refusal(
                    of: value, forKey: key, by: context.programManifests)
                {
                    throw CommandFailure(.invalidValue, problem.message)
                }
            }
            try ReplicaGuard.check(desired, storage: store.storage)
        }
        let applied = try await store.apply(desired, prune: prune)
        guard let sequence = applied.appliedAs else {
            context.output.print("nothing to apply: the store holds these values")
            return
        }
        let count = applied.changes.count
        context.output.print(
            "applied \(count) \(count == 1 ? "change" : "changes") as #\(sequence)")
        try await ReplicaWait.afterWrite(store, timeout: wait, output: context.output)
    }

    /// Fails with status 3, naming every key of `values` that does not fit
    /// its declaration in `manifest` (in key byte order, each with its
    /// reason), before anything is written.
    static func check(
        _ values: [String: PreferenceValue], against manifest: PreferencesManifest?, file: URL
    ) throws {
        guard let manifest else { return }
        let problems = values.keys.sortedByBytes().compactMap { key in
            manifest.validate(key: key, value: values[key]!)
        }
        guard !problems.isEmpty else { return }
        let reasons = problems.map(\.message).joined(separator: "; ")
        let count =
            problems.count == 1
            ? "a value does not fit" : "\(problems.count) values do not fit"
        throw CommandFailure(
            .invalidValue,
            "nothing applied from \(file.path): \(count) the key manifest: \(reasons)")
    }
}
