/// Where a backend keeps history entries older than those the store's
/// document carries (<doc:HistoryAndUndo>).
///
/// The store keeps the newest entries in the document itself, so that an
/// entry is committed in the same write as its change (H3). Every so often
/// — before the write that would leave the document carrying more than a
/// few kilobytes of entries — it moves them here with ``append(_:keep:)``,
/// holding the backend's exclusive access, and only then writes a document
/// without them. So an entry is always in the document, here, or both; the
/// store reads both and takes each sequence once.
///
/// The file backend keeps `<file>.history`, one entry of JSON a line
/// (``PreferencesStorage/historyArchive``).
public protocol HistoryArchive: Sendable {
    /// The archived entries' JSON texts, oldest first, as stored. They may
    /// repeat entries the document still carries, and a text that does not
    /// parse (the torn end of an interrupted append) is skipped.
    func readEntries() throws -> [[UInt8]]

    /// Adds `entries` (oldest first, sequences increasing) durably: when it
    /// returns, they survive a crash. Entries whose sequence is not above
    /// the archive's last one are skipped, so a repeated append changes
    /// nothing. The archive keeps at least its newest entries within
    /// `keep` and drops older ones, so that it stays near that limit: the
    /// file backend lets it grow by a quarter (at least 64 entries or
    /// 16 KiB) before it rewrites; etcd drops them in the same transaction.
    func append(_ entries: [(sequence: Int64, text: [UInt8])], keep: HistoryLimit) throws
}
