import Preferences

/// `prefs replicas [--json]`: the processes that have the store open (F3 in
/// Sources/Preferences/Preferences.docc/RollingOutAChange.md), as a table
/// or one JSON array.
struct ReplicasCommand: PrefsCommand {
    static let name = "replicas"
    static let json = Flag<Self>(
        "--json",
        help: "Print one JSON array of objects with host, pid, program, manifest, applied, since.")
    static let options: [any OptionDeclaration] = [json]
    static let readsManifest = false
    static let help = CommandHelp(
        summary: "List the processes that have the store open.",
        discussion: """
            Every process with the store open registers itself while it is \
            open: its host, pid, program, the digest of the key manifest it \
            declared, and the sequence of the last change it applied. A \
            process that ended without closing the store is not listed (on \
            files its registration is removed; on etcd it expires with its \
            lease). BEHIND is how many changes the replica has still to apply. \
            prefs itself never registers.
            """,
        examples: [
            ("--suite example replicas", "lists who uses that suite"),
            ("replicas --json", "the same as JSON"),
        ])

    let json: Bool

    init(_ parsed: ParsedOptions<Self>) {
        json = parsed[Self.json]
    }

    func run(_ context: CommandContext) async throws {
        let replicas = try context.target.storage.replicas?.list() ?? []
        if json {
            let array = PreferenceValue.array(replicas.map(\.jsonValue))
            context.output.print(array.jsonText)
            return
        }
        let latest = try await context.openStore().snapshot.sequence
        var rows = [["HOST", "PID", "PROGRAM", "MANIFEST", "APPLIED", "BEHIND"]]
        for replica in replicas {
            rows.append([
                replica.host, String(replica.pid), replica.program,
                replica.manifest.isEmpty ? "-" : String(replica.manifest.prefix(8)),
                String(replica.applied), String(max(0, latest - replica.applied)),
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max()! }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1
                    ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            context.output.print(cells.joined(separator: "  "))
        }
    }
}
