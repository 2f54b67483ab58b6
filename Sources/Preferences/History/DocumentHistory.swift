/// The history a store's document carries (<doc:HistoryAndUndo>): its last
/// sequence number, the newest entries — those not yet archived beside it,
/// or, for a backend without an archive, every entry kept — and the largest
/// limit any writer has kept.
///
/// In the file they are the members `sequence`, `history` (an array of
/// entries, oldest first) and `history_keep` (`{"entries":…,"bytes":…}`),
/// each present only when it says something.
struct DocumentHistory: Sendable, Equatable {
    /// The sequence number of the last committed change; 0 before any.
    var sequence: Int64 = 0
    /// The newest entries, oldest first, each with a sequence of at most
    /// ``sequence``.
    var entries: [HistoryEntry] = []
    /// The largest limit a writer of the store has kept.
    var keep: HistoryLimit?

    static let memberNames: Set<String> = ["sequence", "history", "history_keep"]

    /// Reads the members from a document's top-level `fields`. A sequence
    /// that is not a non-negative integer makes the document corrupt; an
    /// entry or a limit that does not parse is left out, never an error: it
    /// must not cost a value.
    init(fields: [String: PreferenceValue], file: String) throws {
        if let stored = fields["sequence"] {
            guard case .int(let number) = stored, number >= 0 else {
                throw PreferencesError.corrupted(
                    file: file,
                    reason: "\"sequence\" must be a non-negative integer, found \(stored.jsonText)")
            }
            sequence = number
        }
        if case .array(let items)? = fields["history"] {
            entries = items.compactMap(HistoryEntry.init(jsonValue:)).filter {
                $0.sequence <= sequence
            }
            entries.sort { $0.sequence < $1.sequence }
        }
        if case .object(let limit)? = fields["history_keep"],
            case .int(let entries)? = limit["entries"], case .int(let bytes)? = limit["bytes"]
        {
            keep = HistoryLimit(entries: Int(clamping: entries), bytes: Int(clamping: bytes))
        }
    }

    init() {}

    /// The members to write, by name; empty for a store without history.
    var members: [String: PreferenceValue] {
        var members: [String: PreferenceValue] = [:]
        if sequence > 0 { members["sequence"] = .int(sequence) }
        if !entries.isEmpty { members["history"] = .array(entries.map(\.jsonValue)) }
        if let keep {
            members["history_keep"] = [
                "entries": .int(Int64(keep.entries)), "bytes": .int(Int64(keep.bytes)),
            ]
        }
        return members
    }
}
