/// The history a store's document carries (<doc:HistoryAndUndo>): its last
/// sequence number, the newest entries — those not yet archived beside it,
/// or, for a backend without an archive, every entry kept — the largest
/// limit any writer has kept, the name of this history, and where the
/// archives of earlier histories of the store were moved.
///
/// In the file they are the members `sequence`, `history` (an array of
/// entries, oldest first, one a line as `prefs log --json` prints them),
/// `history_keep` (`{"entries":…,"bytes":…}`), `history_id` (a random
/// name, given by the first change) and `history_set_aside` (an array of
/// places), each present only when it says something. The entries are kept as their text, as read or written:
/// opening a store builds none of them, and a write copies them as they are.
struct DocumentHistory: Sendable, Equatable {
    /// One entry as its JSON text (on one line), with its sequence.
    struct Carried: Sendable, Equatable {
        var sequence: Int64
        var text: [UInt8]

        init(sequence: Int64, text: [UInt8]) {
            self.sequence = sequence
            self.text = text
        }

        init(_ entry: HistoryEntry) {
            self.init(sequence: entry.sequence, text: Array(entry.jsonText.utf8))
        }

        /// The entry, built from its text; nil when the text is not one.
        var entry: HistoryEntry? { HistoryEntry(jsonText: text, source: "") }
    }

    /// The sequence number of the last committed change; 0 before any.
    var sequence: Int64 = 0
    /// The newest entries, oldest first, each with a sequence of at most
    /// ``sequence``.
    var carried: [Carried] = []
    /// The largest limit a writer of the store has kept.
    var keep: HistoryLimit?
    /// The name of this history, which its archive records too
    /// (``ArchivedHistory``); nil until the first change of a document
    /// written by this version.
    var id: String?
    /// Where the archives of earlier histories of this store were moved
    /// (``HistoryArchive/append(_:history:keep:)``), oldest first.
    var setAside: [String] = []

    static let memberNames: Set<String> = [
        "sequence", "history", "history_keep", "history_id", "history_set_aside",
    ]

    /// The name of a history that has none yet and carries `carried`: 128
    /// random bits in hex for a new one; for one written before histories
    /// had names, the digest of its oldest entry carried, so that two
    /// writers starting from the same document name it alike.
    static func id(continuing carried: [Carried]) -> String {
        if let oldest = carried.first { return PreferencesManifest.digest(of: oldest.text) }
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    init() {}

    /// Reads the members from a document's top-level `fields`, and the
    /// entries from `elements`, the places of the `history` array's
    /// elements in `bytes`. A sequence that is not a non-negative integer
    /// makes the document corrupt; an entry or a limit that does not parse
    /// is left out, never an error: it must not cost a value.
    init(
        fields: [String: PreferenceValue], elements: [Range<Int>]?, in bytes: [UInt8], file: String
    )
        throws
    {
        if let stored = fields["sequence"] {
            guard case .int(let number) = stored, number >= 0 else {
                throw PreferencesError.corrupted(
                    file: file,
                    reason: "\"sequence\" must be a non-negative integer, found \(stored.jsonText)")
            }
            sequence = number
        }
        for range in elements ?? [] {
            var text = Array(bytes[range])
            // An entry written across lines (by hand) is put on one.
            if text.contains(0x0A) {
                guard let entry = HistoryEntry(jsonText: text, source: file) else { continue }
                text = Array(entry.jsonText.utf8)
            }
            guard let number = HistoryEntry.sequence(ofJSONText: text), number > 0,
                number <= sequence
            else { continue }
            carried.append(Carried(sequence: number, text: text))
        }
        if !carried.indices.dropFirst().allSatisfy({
            carried[$0 - 1].sequence < carried[$0].sequence
        }) {
            carried.sort { $0.sequence < $1.sequence }
        }
        if case .object(let limit)? = fields["history_keep"],
            case .int(let entries)? = limit["entries"], case .int(let bytes)? = limit["bytes"]
        {
            keep = HistoryLimit(entries: Int(clamping: entries), bytes: Int(clamping: bytes))
        }
        if case .string(let name)? = fields["history_id"], !name.isEmpty { id = name }
        if case .array(let places)? = fields["history_set_aside"] {
            for case .string(let place) in places { setAside.append(place) }
        }
    }

    /// The entries carried, built from their texts.
    var entries: [HistoryEntry] { carried.compactMap(\.entry) }

    /// The members written through the general JSON writer, by name:
    /// `sequence` and `history_keep` (``write(into:)`` writes `history`).
    var members: [String: PreferenceValue] {
        var members: [String: PreferenceValue] = [:]
        if sequence > 0 { members["sequence"] = .int(sequence) }
        if let keep {
            members["history_keep"] = [
                "entries": .int(Int64(keep.entries)), "bytes": .int(Int64(keep.bytes)),
            ]
        }
        if let id { members["history_id"] = .string(id) }
        if !setAside.isEmpty { members["history_set_aside"] = .array(setAside.map { .string($0) }) }
        return members
    }

    /// Writes the `history` array as the file has it: one entry a line,
    /// at indent 2.
    func write(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, entry) in carried.enumerated() {
            out.append(contentsOf: index == 0 ? "\n    ".utf8 : ",\n    ".utf8)
            out.append(contentsOf: entry.text)
        }
        out.append(contentsOf: "\n  ]".utf8)
    }
}
