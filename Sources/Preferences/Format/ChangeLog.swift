/// When and by whom each stored key was last changed
/// (S18, <doc:StoreGuarantees>), kept compactly in memory.
///
/// A write stamps every key it changes with one record, and an import or a
/// migration changes thousands of keys in one write; so most keys of a
/// store share a few records. The log keeps each distinct record once, one
/// of them as the record of every stored key it does not list by name, and
/// lists by name only the keys with another record, or with none. A
/// 10,000-key store written by one import holds one record and an empty
/// list, where a dictionary of records by key took about 2 MiB.
///
/// The log does not hold the stored keys themselves: a lookup says whether
/// the key is stored (the snapshot or document beside it knows).
struct ChangeLog: Sendable {
    /// The distinct records the keys refer to.
    private var records: [ChangeRecord] = []
    /// The index in `records` of the record of every stored key that
    /// `others` does not list; nil when such keys have none.
    private var shared: Int32?
    /// Keys whose record is not the shared one: an index in `records`, or
    /// `none` for a key with no record.
    private var others: [String: Int32] = [:]

    private static let none: Int32 = -1

    init() {}

    /// A log with these records, by key (keys need not be stored).
    init(_ recordsByKey: [String: ChangeRecord]) {
        var interned = Interner()
        others.reserveCapacity(recordsByKey.count)
        for (key, record) in recordsByKey { others[key] = interned.index(of: record) }
        records = interned.records
    }

    /// The record of `key`; `isStored` says whether the key is stored now.
    func record(forKey key: String, isStored: Bool) -> ChangeRecord? {
        recordNumber(forKey: key, isStored: isStored).map { records[$0] }
    }

    /// The number of the record of `key` among ``distinctRecords``, so a
    /// writer can format each distinct record once.
    func recordNumber(forKey key: String, isStored: Bool) -> Int? {
        if !others.isEmpty, let index = others[key] {
            return index == Self.none ? nil : Int(index)
        }
        guard isStored, let shared else { return nil }
        return Int(shared)
    }

    /// The distinct records, numbered as ``recordNumber(forKey:isStored:)`` numbers them.
    var distinctRecords: [ChangeRecord] { records }

    /// Every record a stored key has, by key.
    func recordsByKey<Keys: Sequence<String>>(storedKeys: Keys) -> [String: ChangeRecord] {
        var result: [String: ChangeRecord] = [:]
        for key in storedKeys {
            if let record = record(forKey: key, isStored: true) { result[key] = record }
        }
        return result
    }

    /// Whether both logs give the same record to each of `storedKeys` and
    /// to each key either lists by name.
    func matches<Keys: Sequence<String>>(_ other: ChangeLog, storedKeys: Keys) -> Bool {
        var stored = Set<String>()
        for key in storedKeys {
            stored.insert(key)
            if record(forKey: key, isStored: true) != other.record(forKey: key, isStored: true) {
                return false
            }
        }
        return [others.keys, other.others.keys].joined().allSatisfy { key in
            stored.contains(key)
                || record(forKey: key, isStored: false)
                    == other.record(forKey: key, isStored: false)
        }
    }

    // MARK: Building

    /// The log of a document read from a file, from the entries of its
    /// `modified` member: each key with the byte range of its value in
    /// `bytes`, already checked as JSON. An entry whose bytes equal an
    /// earlier entry's is that entry's record without being read again;
    /// the last entry of a repeated key counts, and an entry that is not a
    /// record gives its key none.
    ///
    /// `storedOrder` is where the stored keys' string literals are in
    /// `bytes`, in the order of the text, when known. A file this library
    /// wrote lists `modified` in the order of `values`, one entry per stored
    /// key; when the entries' keys are spelled byte for byte as that list
    /// (and `values` repeats no key), the n-th entry is the n-th stored
    /// key's, and the records are paired with the keys without making or
    /// hashing a key (only keys without the shared record become strings).
    /// Anything else (entries missing, extra, repeated, in another order or
    /// spelled otherwise) takes the general way, by key.
    init<Values: Collection<String>>(
        storedKeys: Values, storedOrder: [Range<Int>]? = nil, entries: [StoreDocument.RecordEntry],
        in bytes: [UInt8], file: String
    ) {
        // `storedKeys` is a dictionary's keys: as many as the text lists
        // only when the text repeats none.
        var aligned = false
        if let storedOrder, storedOrder.count == storedKeys.count,
            storedOrder.count == entries.count
        {
            aligned = bytes.withUnsafeBytes { raw in
                zip(storedOrder, entries).allSatisfy {
                    JSONText.sameBytes(raw, $0, $1.quotedKey)
                }
            }
        }
        var interned = Interner()
        // Each entry's record index, in the order of `entries`.
        var indices: [Int32] = []
        indices.reserveCapacity(entries.count)
        bytes.withUnsafeBufferPointer { buffer in
            // The distinct texts read so far, with their record's index.
            var texts: [(range: Range<Int>, index: Int32)] = []
            let raw = UnsafeRawBufferPointer(buffer)
            for entry in entries {
                let range = entry.value
                var index: Int32?
                for text in texts.reversed() where JSONText.sameBytes(raw, text.range, range) {
                    index = text.index
                    break
                }
                if index == nil {
                    // Read from its members: the object itself is not needed.
                    let found = JSONText.members(ofObjectAt: range, in: buffer)
                        .flatMap(ChangeRecord.init(members:))
                        .map { interned.index(of: $0) }
                    index = found ?? Self.none
                    // A few distinct texts are remembered; a store with many
                    // more still interns their records by value.
                    if texts.count < 16 { texts.append((range, index!)) }
                }
                indices.append(index!)
            }
        }
        if aligned {
            self.init(
                keys: entries.lazy.map { $0.key(in: bytes) }, indices: indices,
                records: interned.records)
            return
        }
        var byKey = [String: Int32](minimumCapacity: entries.count)
        for (entry, index) in zip(entries, indices) { byKey[entry.key(in: bytes)] = index }
        var stored: [Int32] = []
        stored.reserveCapacity(storedKeys.count)
        for key in storedKeys { stored.append(byKey[key] ?? Self.none) }
        self.init(keys: storedKeys, indices: stored, records: interned.records)
    }

    /// The log after a write from `baseValues` (whose log is `base`) to
    /// `values`: `stamp` for each key whose value changed, the earlier
    /// record for the others.
    init(
        editing base: ChangeLog, baseValues: [String: PreferenceValue],
        values: [String: PreferenceValue], stamp: ChangeRecord
    ) {
        var records = base.records
        let stampIndex = Int32(records.count)
        records.append(stamp)
        var indices: [Int32] = []
        indices.reserveCapacity(values.count)
        let baseOthers = base.others
        let baseShared = base.shared ?? Self.none
        for (key, value) in values {
            if baseValues.isEmpty || baseValues[key] != value {
                indices.append(stampIndex)
            } else {
                indices.append(baseOthers.isEmpty ? baseShared : baseOthers[key] ?? baseShared)
            }
        }
        self.init(keys: values.keys, indices: indices, records: records)
    }

    /// The same log as ``init(editing:baseValues:values:stamp:)``, built
    /// from `base` by changing only the entries of `changedKeys` — the keys
    /// whose value differs between `baseValues` and `values` (added,
    /// changed or removed; a key may appear twice) — so a small edit of a
    /// large store costs in proportion to the edit and to the keys `base`
    /// lists, not to the store. nil where that shortcut does not apply (the
    /// shared record would change, or `base` lists a key that is not
    /// stored): the caller then builds the log in full.
    init?(
        editing base: ChangeLog, baseValues: [String: PreferenceValue],
        values: [String: PreferenceValue], changedKeys: [String], stamp: ChangeRecord
    ) {
        if baseValues.isEmpty { return nil }
        var records = base.records
        let stampIndex = Int32(records.count)
        records.append(stamp)
        var others = base.others
        for key in changedKeys {
            others[key] = values[key] == nil ? nil : stampIndex
        }
        // Keys not listed have the shared record (or none); count each
        // record's keys from the list alone, which needs every listed key
        // to be stored.
        var counts = [Int](repeating: 0, count: records.count)
        var withNone = 0
        for (key, index) in others {
            guard values[key] != nil else { return nil }
            if index == Self.none { withNone += 1 } else { counts[Int(index)] += 1 }
        }
        let unlisted = values.count - others.count
        if let shared = base.shared {
            counts[Int(shared)] += unlisted
        } else {
            withNone += unlisted
        }
        // The most frequent record, as the full build chooses it; it must be
        // the shared one still, or every key would need looking at.
        let (best, _, kept, renumbered) = Self.choose(records, counts: counts, withNone: withNone)
        guard best == base.shared else { return nil }
        if kept.count != records.count {
            for (key, index) in others where index != Self.none {
                others[key] = renumbered[Int(index)]
            }
        }
        self.records = kept
        self.shared = best.map { renumbered[Int($0)] }
        self.others = others
    }

    /// Chooses the record most keys have as the shared one, lists the
    /// other keys, and keeps only the records some key refers to.
    private init<Values: Collection<String>>(
        keys: Values, indices: [Int32], records: [ChangeRecord]
    ) {
        var counts = [Int](repeating: 0, count: records.count)
        var withNone = 0
        for index in indices {
            if index == Self.none { withNone += 1 } else { counts[Int(index)] += 1 }
        }
        let (best, bestCount, kept, renumbered) = Self.choose(
            records, counts: counts, withNone: withNone)
        self.records = kept
        self.shared = best.map { renumbered[Int($0)] }
        let sharedOld = best ?? Self.none
        let listed = indices.count - bestCount
        if listed > 0 {
            others.reserveCapacity(listed)
            // A key is taken from `keys` only when it is listed: a lazy
            // collection makes only those.
            var position = keys.startIndex
            for index in indices {
                if index != sharedOld {
                    others[keys[position]] = index == Self.none ? Self.none : renumbered[Int(index)]
                }
                keys.formIndex(after: &position)
            }
        }
    }

    /// The record most keys have (on a tie, the later, newer one; nil when
    /// more keys have none) with its count of keys, given each record's
    /// count and the count of keys with none; and the records some key has,
    /// with each record's new index among them (their first order kept).
    private static func choose(_ records: [ChangeRecord], counts: [Int], withNone: Int) -> (
        best: Int32?, bestCount: Int, kept: [ChangeRecord], renumbered: [Int32]
    ) {
        var best: Int32?
        var bestCount = withNone
        for (index, count) in counts.enumerated() where count > 0 && count >= bestCount {
            (best, bestCount) = (Int32(index), count)
        }
        var renumbered = [Int32](repeating: Self.none, count: records.count)
        var kept: [ChangeRecord] = []
        for (index, count) in counts.enumerated() where count > 0 {
            renumbered[index] = Int32(kept.count)
            kept.append(records[index])
        }
        return (best, bestCount, kept, renumbered)
    }

    /// Gives each distinct record one index. Consecutive keys often carry
    /// equal records, so the last one is compared before anything else; a
    /// few records are looked up by comparing them, which costs less than
    /// hashing their four strings, and only more than ``scanLimit`` get a
    /// dictionary.
    private struct Interner {
        static let scanLimit = 8
        var records: [ChangeRecord] = []
        /// Every record's index, once there are more than ``scanLimit``.
        var indices: [ChangeRecord: Int32] = [:]
        var last: (ChangeRecord, Int32)?

        mutating func index(of record: ChangeRecord) -> Int32 {
            if let last, last.0 == record { return last.1 }
            let index: Int32
            if records.count <= Self.scanLimit {
                index = records.firstIndex(of: record).map { Int32($0) } ?? add(record)
            } else {
                index = indices[record] ?? add(record)
            }
            last = (record, index)
            return index
        }

        private mutating func add(_ record: ChangeRecord) -> Int32 {
            let index = Int32(records.count)
            records.append(record)
            if records.count > Self.scanLimit {
                if indices.isEmpty {
                    for (number, known) in records.enumerated() { indices[known] = Int32(number) }
                } else {
                    indices[record] = index
                }
            }
            return index
        }
    }
}
