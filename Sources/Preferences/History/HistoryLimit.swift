/// How much history a store keeps (H4, <doc:HistoryAndUndo>): the last
/// ``entries`` changes, and of those no more than ``bytes`` of their JSON,
/// whichever keeps fewer.
///
/// ```swift
/// var limits = PreferencesLimits()
/// limits.history = HistoryLimit(entries: 10_000, bytes: 8 << 20)
/// let store = try await PreferencesStore(suite: "com.example.app", limits: limits)
/// ```
///
/// Programs that share a store may ask for different limits. The store
/// keeps the largest each has asked for — its document records the largest
/// entries and bytes any writer has used, and every writer keeps at least
/// that — so a program with a smaller limit, or with history ``off``, never
/// drops entries that another program keeps. Sequence numbers move with
/// every change whatever the limit.
public struct HistoryLimit: Sendable, Hashable {
    /// The most entries kept (1,000).
    public var entries: Int
    /// The most bytes of entries kept, counted as their JSON text (1 MiB).
    public var bytes: Int

    /// A limit of `entries` entries and `bytes` bytes.
    public init(entries: Int = 1000, bytes: Int = 1 << 20) {
        self.entries = max(0, entries)
        self.bytes = max(0, bytes)
    }

    /// The last 1,000 entries, at most 1 MiB of them.
    public static let `default` = HistoryLimit()

    /// No entries of this program's own asking; another program sharing the
    /// store may still keep them.
    public static let off = HistoryLimit(entries: 0, bytes: 0)

    /// Whether entries are kept at all.
    var keepsEntries: Bool { entries > 0 && bytes > 0 }

    /// The larger of two limits, member by member.
    func union(_ other: HistoryLimit?) -> HistoryLimit {
        guard let other else { return self }
        return HistoryLimit(entries: max(entries, other.entries), bytes: max(bytes, other.bytes))
    }

    /// Where the newest entries this limit keeps start, of entries (oldest
    /// first) of these sizes.
    func firstKept(sizes: [Int]) -> Int {
        guard keepsEntries else { return sizes.endIndex }
        var start = sizes.endIndex
        var total = 0
        while start > sizes.startIndex, sizes.endIndex - start < entries {
            let size = sizes[start - 1]
            if total + size > bytes { break }
            total += size
            start -= 1
        }
        return start
    }
}
