import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `prefs log [KEY ...] [-n N] [--since SEQ|TIME] [--json]`: the changes the
/// store's history keeps, newest first, one a line.
///
/// A line is the entry's description (`#412 2026-12-02T03:12:09.120Z alice
/// via prefs: max_connections 100 → 1000`, with what made the change in
/// parentheses after the program when it was not a plain edit); with
/// `--json`, its JSON object, as the store keeps it.
struct LogCommand: PrefsCommand {
    static let name = "log"
    static let arguments = CommandArguments("[KEY ...]", 0..., completing: [.keys])
    static let count = ValueOption<Self>(
        "--max-count", "N", short: "-n", help: "Show only the N newest changes.")
    static let since = ValueOption<Self>(
        "--since", "SEQ|TIME",
        help: "Only the changes after sequence number SEQ, or made at or after TIME (ISO 8601).")
    static let json = Flag<Self>("--json", help: "Print each change as one JSON object.")
    static let options: [any OptionDeclaration] = [count, since, json]
    static let readsManifest = false
    static let help = CommandHelp(
        summary: "Print the changes the store's history keeps, newest first.",
        discussion: """
            One line per change: '#<sequence> <UTC time> <user> via <program>: \
            <key> <old> → <new>, …', values as compact JSON and (unset) for a key \
            that was not set before or was removed; under sudo the user reads \
            'root (sudo from alice)', and a change made by a revert, a restore, \
            an import or a migration names it in parentheses after the program. \
            With KEY, only the changes that touched one of the keys. --since takes \
            a sequence number (the changes after it) or an ISO 8601 time such as \
            2026-12-02T03:12:09Z or 2026-12-02T03:12:09.120Z (the changes made at \
            or after it). --json prints one object a line: \
            {"sequence":…,"at":…,"by":…,"program":…,"host":…,"changes":{"k":{"old":…,"new":…}}}, \
            with "old" absent for a key that was not set and "new" absent for one \
            that was removed. The history keeps the last 1,000 changes unless the \
            programs sharing the store keep more. A change of a secret key is \
            shown as '<key> <redacted> → <redacted>': the history never keeps \
            its values, so --reveal cannot show them. When the store's file was \
            deleted, reset after corruption or replaced by another copy, its \
            numbering starts again: the history of before is kept aside, never \
            shown as this one's, and a note on standard error says where.
            """,
        examples: [
            ("log", "every change kept, newest first"),
            ("log -n 5 max_connections", "the last five changes to max_connections"),
            ("log --since 400", "the changes after #400"),
            ("log --since 2026-12-02T03:00:00Z --json", "since that time, as JSON lines"),
        ])

    /// The keys whose changes to show; empty for every change.
    let keys: [String]
    let count: Int?
    let since: HistoryPoint?
    let json: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        keys = parsed.arguments
        json = parsed[Self.json]
        if let text = parsed[Self.count] {
            guard let number = HistoryPoint.sequence(text), let count = Int(exactly: number) else {
                throw .usage(
                    "invalid \(Self.count.spec.shortName!) '\(text)' (use a whole number of changes)",
                    usage: Self.self)
            }
            self.count = count
        } else {
            count = nil
        }
        if let text = parsed[Self.since] {
            since = try HistoryPoint.parse(text, option: Self.since.spec, command: Self.self)
        } else {
            since = nil
        }
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        var after: Int64?
        var date: Date?
        switch since {
        case .sequence(let sequence): after = sequence
        case .time(let time): date = time
        case nil: break
        }
        let history = try await store.history(for: keys, after: after, since: date)
        var newestFirst = history.entries.reversed()[...]
        if let count { newestFirst = newestFirst.prefix(count) }
        let lines = newestFirst.map { entry in
            let shown = context.secrets.shown(entry)
            return (json ? shown.jsonText : shown.description) + "\n"
        }
        if !lines.isEmpty { context.output.standardOutput(lines.joined()) }
        if !history.earlierHistories.isEmpty {
            context.output.note(
                "the history from before this store was deleted, reset or replaced is kept aside, not shown: "
                    + history.earlierHistories.joined(separator: ", "))
        }
    }
}
