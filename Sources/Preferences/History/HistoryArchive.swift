/// Where a backend keeps history entries older than those the store's
/// document carries (<doc:HistoryAndUndo>).
///
/// The store keeps the newest entries in the document itself, so that an
/// entry is committed in the same write as its change (H3). Every so often
/// — before the write that would leave the document carrying more than a
/// few kilobytes of entries — it moves them here with
/// ``append(_:history:keep:)``, holding the backend's exclusive access, and
/// only then writes a document without them. So an entry is always in the
/// document, here, or both; the store reads both and takes each sequence
/// once.
///
/// An archive belongs to one life of its document: the document names its
/// history (`history_id`), and the archive records the same name. A
/// document deleted and made again, reset after corruption, or replaced by
/// another copy starts another history, and the archive of the earlier one
/// is never read or added to as this one's (``ArchivedHistory/share(of:through:carrying:)``):
/// the next append moves it aside, whole, and starts again. A copy of an
/// older state of the same history shares the archive's entries up to its
/// own last change: the next append keeps those, and sets the whole archive
/// aside as well.
///
/// The file backend keeps `<file>.history`, one entry of JSON a line
/// (``PreferencesStorage/historyArchive``), after a first line naming its
/// history; it moves an earlier one to `<file>.history.<UTC stamp>`.
public protocol HistoryArchive: Sendable {
    /// Where the archive is, for messages: `<file>.history`, `KEY.history/`.
    var location: String { get }

    /// The archive as stored: the history it belongs to, and its entries'
    /// JSON texts, oldest first. They may repeat entries the document still
    /// carries, and a text that does not parse (the torn end of an
    /// interrupted append) is skipped.
    func read() throws -> ArchivedHistory

    /// Adds `entries` (oldest first, sequences increasing) of the history
    /// named `id` durably: when it returns, they survive a crash.
    ///
    /// When the archive holds another history, or entries after those it
    /// shares with `entries` (``ArchivedHistory/share(of:through:carrying:)``
    /// is not ``ArchivedHistory/Share/all``), it first sets the whole archive
    /// aside, where it is never read or added to again but kept, keeps in
    /// place only the entries it shares, and returns where it went;
    /// otherwise nil.
    ///
    /// Entries whose sequence is not above the archive's last one are
    /// skipped, so a repeated append changes nothing. The archive keeps at
    /// least its newest entries within `keep` and drops older ones, so that
    /// it stays near that limit: the file backend lets it grow by a quarter
    /// (at least 64 entries or 16 KiB) before it rewrites; etcd drops them
    /// in the same transaction.
    func append(
        _ entries: [(sequence: Int64, text: [UInt8])], history id: String, keep: HistoryLimit
    ) throws -> String?
}

/// A history archive's contents (``HistoryArchive/read()``).
public struct ArchivedHistory: Sendable, Equatable {
    /// The history the archive belongs to; nil for one written before
    /// archives named it, or empty.
    public var id: String?
    /// The entries' JSON texts, oldest first.
    public var entries: [[UInt8]]

    public init(id: String?, entries: [[UInt8]]) {
        self.id = id
        self.entries = entries
    }

    /// How much of these archived entries is the history `id` of a
    /// document whose last change is `sequence` and which carries
    /// `carrying`.
    ///
    /// - ``Share/all``: the archive names the same history (or none, for an
    ///   archive written before archives named one), every entry it shares
    ///   with `carrying` is the same text, and when it holds entries past
    ///   `sequence` — as it may for a writer whose copy of the document is a
    ///   few changes old — it holds the entry of `sequence` itself, the same
    ///   as `carrying`'s.
    /// - ``Share/through(_:)``: the document is a copy of an older state of
    ///   the same history, which has since gone on in another way: the
    ///   entries both hold agree up to that sequence and differ after it.
    ///   The archive's entries up to it are this document's too.
    /// - ``Share/none``: another history. An unnamed archive is judged by
    ///   its entries alone: a document made again numbers its changes from
    ///   1, so its entries fall below the archive's last one without being
    ///   the archive's.
    public func share(
        of id: String?, through sequence: Int64, carrying: [(sequence: Int64, text: [UInt8])]
    ) -> Share {
        if let own = self.id, own != id { return .none }
        var archived: [Int64: [UInt8]] = [:]
        var last: Int64 = 0
        for text in entries {
            guard let number = HistoryEntry.sequence(ofJSONText: text) else { continue }
            archived[number] = text
            last = max(last, number)
        }
        var agreed: Int64?
        for entry in carrying {
            guard let text = archived[entry.sequence] else { continue }
            guard text.elementsEqual(entry.text) else { return agreed.map(Share.through) ?? .none }
            agreed = entry.sequence
        }
        return last <= sequence || agreed == sequence ? .all : agreed.map(Share.through) ?? .none
    }

    /// How much of an archive is a document's history
    /// (``share(of:through:carrying:)``).
    public enum Share: Sendable, Equatable {
        /// Every entry.
        case all
        /// The entries up to this sequence; those after it are of a life
        /// the document replaced.
        case through(Int64)
        /// None: the archive is another history's.
        case none

        /// Whether the entry of `sequence` is the document's.
        public func holds(_ sequence: Int64) -> Bool {
            switch self {
            case .all: true
            case .through(let last): sequence <= last
            case .none: false
            }
        }
    }

    /// The line that names an archive's history: `{"history_id":"…"}`.
    public static func identityText(_ id: String) -> [UInt8] {
        Array(#"{"history_id":"#.utf8) + Array(PreferenceValue.string(id).jsonText.utf8)
            + [UInt8(ascii: "}")]
    }

    /// The history an archive's identity line names; nil for any other
    /// text, an entry among them.
    public static func id(inIdentityText text: [UInt8]) -> String? {
        guard text.starts(with: #"{"history_id":"#.utf8),
            case .object(let fields)? = try? PreferenceValue(
                jsonText: String(decoding: text, as: UTF8.self)),
            fields.count == 1, case .string(let id)? = fields["history_id"]
        else { return nil }
        return id
    }
}
