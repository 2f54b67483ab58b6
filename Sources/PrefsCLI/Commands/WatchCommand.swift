import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `prefs watch [KEY ...]`: the current values, then one JSON line per
/// change, until SIGINT or SIGTERM.
///
/// Line shapes: `{"key":"k","value":<json>,"modified":{"at":…,"by":…,"program":…}}`
/// for a key that is set (or changed), with when and by whom it was changed
/// where that is recorded (see "Who changed what" in
/// Sources/Preferences/Preferences.docc/OperatorLoop.md), and
/// `{"key":"k","removed":true}` for a key that was removed. A temporary
/// value adds `"until":"<UTC time>"`, when it ends (and the line for its
/// end comes then). Secret values are `"<redacted>"` unless `--reveal`.
///
/// With `--since SEQ` it follows the store's history instead, as
/// `PreferencesStore.changes(since:)` delivers it: each change after SEQ,
/// first those the history keeps and then each new one, as the entry's
/// JSON object (what `prefs log --json` prints), and
/// `{"gap":{"after":N,"resumes_at":M}}` where the changes between are not
/// in the history kept.
struct WatchCommand: PrefsCommand {
    static let name = "watch"
    static let arguments = CommandArguments("[KEY ...]", 0..., completing: [.keys])
    static let since = ValueOption<Self>(
        "--since", "SEQ",
        help: "Print every change after sequence number SEQ as its history entry, then new ones.")
    static let options: [any OptionDeclaration] = [since]
    static let help = CommandHelp(
        summary: "Print one JSON line per change until interrupted.",
        discussion: """
            First prints the current value of every stored key (or of each KEY \
            given), then one line per changed key as changes happen, in this \
            process or any other: {"key":"k","value":<json>} when a key is set \
            and {"key":"k","removed":true} when it is removed; a temporary value \
            (set with 'prefs set --for') adds "until":"<UTC time>", and when it \
            ends the key's line comes again with the value it returns to. Secret \
            values are shown as "<redacted>" unless --reveal is given. With --since SEQ it \
            prints instead every change after SEQ (see 'prefs log'), first from the \
            history and then as each is made, none missed nor repeated, one \
            history entry a line as 'prefs log --json' prints it (with KEY, only \
            the changes that touched one of the keys); where the history no \
            longer keeps some changes it prints {"gap":{"after":N,"resumes_at":M}} \
            before going on. So a consumer that remembers the last sequence it \
            handled resumes where it stopped. Lines are flushed as they are \
            written. SIGINT or SIGTERM ends it with status 0.
            """,
        examples: [
            ("watch", "follows every key"),
            ("watch dark_mode language", "follows two keys"),
            ("watch --since 412", "the changes after #412, then new ones"),
        ])

    /// The keys to follow; empty for every key.
    let keys: Set<String>
    /// The sequence number to follow the history from, with `--since`.
    let since: Int64?

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        keys = Set(parsed.arguments)
        if let text = parsed[Self.since] {
            guard let sequence = HistoryPoint.sequence(text) else {
                throw .usage(
                    "invalid \(Self.since.spec.name) '\(text)' (use a sequence number)",
                    usage: Self.self)
            }
            since = sequence
        } else {
            since = nil
        }
    }

    func run(_ context: CommandContext) async throws {
        // Caught from before the store opens: a signal at any moment from
        // here on ends the watch with status 0, even before its first line.
        let stop = context.stopSignal()
        let store = try await context.openStore()
        let output = context.output
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if let since {
                    for await event in store.changes(since: since) {
                        if let line = Self.historyLine(event, keys: keys, secrets: context.secrets)
                        {
                            output.print(line)
                        }
                    }
                    return
                }
                var previous: [String: PreferenceValue] = [:]
                for await snapshot in store.changes() {
                    var current = snapshot.values
                    if !keys.isEmpty { current = current.filter { keys.contains($0.key) } }
                    context.secrets.learn(snapshot)
                    let lines = Self.changeLines(
                        from: previous, to: current, modifications: snapshot.modification,
                        ends: snapshot.temporaryValueEnd, secrets: context.secrets)
                    if !lines.isEmpty { output.standardOutput(lines.joined()) }
                    previous = current
                }
            }
            group.addTask {
                for await _ in stop { return }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// The line for one event of the history feed: the entry's JSON, nil
    /// for a change that touched none of `keys` (when there are any), or
    /// the gap. A gap is always shown: the changes it stands for may have
    /// touched the keys.
    static func historyLine(
        _ event: HistoryEvent, keys: Set<String>, secrets: SecretRedaction
    ) -> String? {
        switch event {
        case .change(let entry):
            guard keys.isEmpty || entry.changes.keys.contains(where: keys.contains) else {
                return nil
            }
            return secrets.shown(entry).jsonText
        case .gap(let after, let resumesAt):
            return "{\"gap\":{\"after\":\(after),\"resumes_at\":\(resumesAt)}}"
        }
    }

    /// One line per key whose value differs between the two states, sorted
    /// by key; `ends` gives when a temporary value ends.
    static func changeLines(
        from previous: [String: PreferenceValue], to current: [String: PreferenceValue],
        modifications: (String) -> PreferenceModification? = { _ in nil },
        ends: (String) -> Date? = { _ in nil }, secrets: SecretRedaction
    ) -> [String] {
        let keys = Set(previous.keys).union(current.keys).sortedByBytes()
        return keys.compactMap { key in
            let name = PreferenceValue.string(key).jsonText
            switch (previous[key], current[key]) {
            case (let old, let new?) where old != new:
                let modified = modifications(key).map { ",\"modified\":\($0.jsonValue.jsonText)" }
                let until = ends(key).map {
                    ",\"until\":\(PreferenceValue.string(ListCommand.timestamp($0)).jsonText)"
                }
                let value = secrets.shown(new, forKey: key).jsonText
                return "{\"key\":\(name),\"value\":\(value)\(modified ?? "")\(until ?? "")}\n"
            case (_?, nil):
                return "{\"key\":\(name),\"removed\":true}\n"
            default:
                return nil
            }
        }
    }
}
