import Preferences

/// `prefs revert SEQ [--force]`: puts back the values change SEQ replaced,
/// as a new change.
///
/// Prints `reverted #SEQ as #NEW`, or that there was nothing to revert.
/// When a key the change touched changed again since, nothing is written
/// and the command exits with status 3 naming the keys, unless `--force`;
/// a change the history no longer keeps is status 3 too, naming the oldest
/// change kept.
struct RevertCommand: PrefsCommand {
    static let name = "revert"
    static let arguments = CommandArguments("SEQ", 1...1)
    static let force = Flag<Self>(
        "--force", help: "Put the old values back even over keys that changed since.")
    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let options: [any OptionDeclaration] = [force, wait]
    static let readsManifest = false
    static let help = CommandHelp(
        summary: "Undo one change, as a new change.",
        discussion: """
            Puts back, for each key change SEQ touched (see 'prefs log'), the \
            value it had before that change — removing a key that was not set — \
            in one new change, and prints 'reverted #SEQ as #NEW'. When those \
            keys already hold those values it writes nothing and says so. When \
            one of the keys changed again after SEQ, nothing is written and the \
            command exits with status 3 naming them; --force puts the old values \
            back anyway. A change older than the history kept exits with status \
            3, naming the oldest change kept.
            """,
        examples: [
            ("revert 412", "prints: reverted #412 as #415"),
            ("revert 412 --force", "also over keys changed after #412"),
        ])

    let sequence: Int64
    let force: Bool
    let wait: Duration?

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        let text = parsed.arguments[0]
        guard let sequence = HistoryPoint.sequence(text) else {
            throw .usage(
                "invalid sequence number '\(text)' (use a change's number from 'prefs log')",
                usage: Self.self)
        }
        self.sequence = sequence
        force = parsed[Self.force]
        wait = try ReplicaWait.timeout(parsed[Self.wait])
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        if let change = try await store.revert(sequence, force: force) {
            context.output.print("reverted #\(sequence) as #\(change)")
            try await ReplicaWait.afterWrite(store, timeout: wait, output: context.output)
        } else {
            context.output.print("nothing to revert: the keys already hold those values")
        }
    }
}
