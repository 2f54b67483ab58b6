import Preferences

/// The table, in ALICE's form, and every violating state with what
/// persisted in it, so that it can be built again.
enum Report {
    static func table(_ rows: [Explorer.Row]) -> String {
        var lines = [
            pad("workload", 19) + pad("model", 7) + pad("calls", 7, right: true)
                + pad("crash points", 14, right: true) + pad("states", 9, right: true)
                + pad("opened", 9, right: true) + pad("violations", 12, right: true)
        ]
        for row in rows {
            lines.append(
                pad(row.workload, 19) + pad(row.model?.rawValue ?? "live", 7)
                    + pad("\(row.calls)", 7, right: true)
                    + pad("\(row.crashPoints)", 14, right: true)
                    + pad("\(row.states)", 9, right: true)
                    + pad("\(row.opened)", 9, right: true)
                    + pad("\(row.violating.count)", 12, right: true))
        }
        // Every state is counted once: a state two models allow is opened
        // once, so the distinct states of all rows are those opened.
        let states = rows.reduce(0) { $0 + $1.opened }
        let opened = rows.reduce(0) { $0 + $1.opened }
        let violations = rows.reduce(0) { $0 + $1.violating.count }
        lines.append(
            pad("total", 19) + pad("", 7) + pad("", 7) + pad("", 14)
                + pad("\(states)", 9, right: true) + pad("\(opened)", 9, right: true)
                + pad("\(violations)", 12, right: true))
        return lines.joined(separator: "\n")
    }

    static func violations(_ row: Explorer.Row, record: BrokenRecord, root: String) -> String {
        var lines: [String] = []
        for (state, acknowledged, violations) in row.violating {
            let point =
                state.crashPoint < 0
                ? "before the first call"
                : "after #\(state.crashPoint) \(BrokenRecord.describe(record.calls[state.crashPoint], root: root))"
            lines.append(
                "violation in \(row.workload) (\(row.model?.rawValue ?? "live, no crash")): \(row.model == nil ? "seen" : "crash") \(point), \(acknowledged) acknowledged"
            )
            for violation in violations { lines.append("  \(violation)") }
            guard row.model != nil else { continue }
            lines.append("  persisted of the unsynced: " + describe(state.persisted, record, root))
            lines.append("  lost: " + describe(state.lost, record, root))
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ indices: [Int], _ record: BrokenRecord, _ root: String) -> String
    {
        // The lock file's writes (its generation) are never synced and
        // matter to no invariant: counted, not listed.
        let isLockFile = { (index: Int) -> Bool in
            if case .write(let path, _, _) = record.calls[record.micro[index].call] {
                return path.hasSuffix(".lock")
            }
            return false
        }
        let lockWrites = indices.filter(isLockFile).count
        let listed = indices.filter { !isLockFile($0) }
        var text = listed.isEmpty ? "nothing" : describeEach(listed, record, root)
        if lockWrites > 0 { text += " (and \(lockWrites) writes of the lock file)" }
        return text
    }

    private static func describeEach(_ indices: [Int], _ record: BrokenRecord, _ root: String)
        -> String
    {
        indices.map { index in
            let operation = record.micro[index]
            let call =
                "#\(operation.call) \(BrokenRecord.describe(record.calls[operation.call], root: root))"
            switch operation.kind {
            case .write(_, let offset, let bytes, let fill):
                if case .data = fill, record.dataChanges.contains(where: { $0.whole == [index] }) {
                    return call
                }
                return call + " [\(fill) at \(offset)..<\(offset + bytes.count)]"
            case .size(_, let length): return call + " [size \(length)]"
            case .mode(_, let mode): return call + " [mode \(String(mode, radix: 8))]"
            default: return call
            }
        }.joined(separator: "; ")
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }
}
