import Preferences

/// `prefs watch [KEY ...]`: the current values, then one JSON line per
/// change, until SIGINT or SIGTERM.
///
/// Line shapes: `{"key":"k","value":<json>,"modified":{"at":…,"by":…,"program":…}}`
/// for a key that is set (or changed), with when and by whom it was changed
/// where that is recorded (see "Who changed what" in
/// Sources/Preferences/Preferences.docc/OperatorLoop.md), and
/// `{"key":"k","removed":true}` for a key that was removed.
struct WatchCommand: PrefsCommand {
    static let name = "watch"
    static let arguments = CommandArguments("[KEY ...]", 0..., completing: [.keys])
    static let help = CommandHelp(
        summary: "Print one JSON line per change until interrupted.",
        discussion: """
            First prints the current value of every stored key (or of each KEY \
            given), then one line per changed key as changes happen, in this \
            process or any other: {"key":"k","value":<json>} when a key is set \
            and {"key":"k","removed":true} when it is removed. Lines are \
            flushed as they are written. SIGINT or SIGTERM ends it with status 0.
            """,
        examples: [
            ("watch", "follows every key"),
            ("watch dark_mode language", "follows two keys"),
        ])

    /// The keys to follow; empty for every key.
    let keys: Set<String>

    init(_ parsed: ParsedOptions<Self>) {
        keys = Set(parsed.arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try await context.openStore()
        let output = context.output
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var previous: [String: PreferenceValue] = [:]
                for await snapshot in store.changes() {
                    var current = snapshot.values
                    if !keys.isEmpty { current = current.filter { keys.contains($0.key) } }
                    let lines = Self.changeLines(
                        from: previous, to: current, modifications: snapshot.modification)
                    if !lines.isEmpty { output.standardOutput(lines.joined()) }
                    previous = current
                }
            }
            group.addTask { await context.stopSignal() }
            await group.next()
            group.cancelAll()
        }
    }

    /// One line per key whose value differs between the two states, sorted by key.
    static func changeLines(
        from previous: [String: PreferenceValue], to current: [String: PreferenceValue],
        modifications: (String) -> PreferenceModification? = { _ in nil }
    ) -> [String] {
        let keys = Set(previous.keys).union(current.keys).sortedByBytes()
        return keys.compactMap { key in
            let name = PreferenceValue.string(key).jsonText
            switch (previous[key], current[key]) {
            case (let old, let new?) where old != new:
                let modified = modifications(key).map { ",\"modified\":\($0.jsonValue.jsonText)" }
                return "{\"key\":\(name),\"value\":\(new.jsonText)\(modified ?? "")}\n"
            case (_?, nil):
                return "{\"key\":\(name),\"removed\":true}\n"
            default:
                return nil
            }
        }
    }
}
