/// The file's bytes (<doc:FileFormat>): pretty-printed, keys sorted,
/// newline at the end.
///
/// Written here rather than through one `PreferenceValue` tree, with the
/// same bytes as `JSONText` writes for it. One walk over `values` copies
/// each key's bytes into one buffer and writes each value's text into
/// another (`StoredEntries`); the keys are then sorted once (as bytes,
/// `ByteKeySort`) for both `values` and `modified`, each distinct change
/// record is formatted once however many keys share it (`RecordTexts`),
/// and the file is put together from those pieces (`Layout`). A store's
/// next write of the same keys copies that file around the entries that
/// changed (``EncodedFile``).
extension StoreDocument {
    /// The file's bytes.
    func encode(file: String, limits: PreferencesLimits) throws -> [UInt8] {
        try encode(file: file, limits: limits, after: nil, changedKeys: nil).bytes
    }

    /// ``encode(file:limits:)``, with where each key's value and record lie
    /// in the file. When `previous` encodes this document before a change
    /// of the values of `changedKeys` alone (no key added or removed, each
    /// spelled as before, each with a record before and after), the file
    /// is `previous`'s bytes copied in long runs around those entries.
    func encode(
        file: String, limits: PreferencesLimits, after previous: EncodedFile?,
        changedKeys: [String]?
    ) throws -> EncodedFile {
        var encoded: EncodedFile
        if let previous, let changedKeys, let copy = copy(of: previous, changedKeys, limits) {
            encoded = copy
        } else {
            let entries = try StoredEntries(self, file: file, limits: limits)
            let records = RecordTexts(modifications.distinctRecords, of: entries)
            let guess =
                entries.texts.count + 2 * entries.keys.bytes.count + 128 * entries.textEnds.count
            encoded = Layout(self, hasRecords: records.any, sizeGuess: guess)
                .file(entries: entries, records: records, order: entries.keys.sortedOrder())
        }
        if encoded.bytes.count > limits.maxFileSize {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the new contents are \(encoded.bytes.count) bytes, over the limit of \(limits.maxFileSize)"
            )
        }
        return encoded
    }

    /// `previous` with the values and records of `changedKeys` written
    /// anew; nil when the keys are not those `previous` holds.
    private func copy(
        of previous: EncodedFile, _ changedKeys: [String], _ limits: PreferencesLimits
    ) -> EncodedFile? {
        guard !changedKeys.isEmpty, values.count == previous.keys.count,
            let modifiedMember = previous.modifiedMember
        else { return nil }
        var edits: [(place: Int, texts: [[UInt8]])] = []
        for name in changedKeys {
            guard let index = values.index(forKey: name) else { return nil }
            let (key, value) = values[index]
            guard let place = previous.place(of: key), previous.spans[4 * place + 2] >= 0,
                value.depth <= limits.maxDepth,
                let record = modifications.record(forKey: key, isStored: true)
            else { return nil }
            if edits.contains(where: { $0.place == place }) { continue }
            var texts: [[UInt8]] = [[], []]
            StoredEntries.write(value, into: &texts[0])
            record.write(into: &texts[1])
            edits.append((place, texts))
        }
        edits.sort { $0.place < $1.place }
        var spans = previous.spans
        let layout = Layout(self, hasRecords: true, sizeGuess: previous.bytes.count + 256)
        var file = layout.file(keys: previous.keys, order: previous.order) { isValues, out in
            let (range, slot) = isValues ? (previous.valuesMember, 0) : (modifiedMember, 2)
            // Every span of the member moves with it, and those after a
            // changed entry by the change in its size.
            var (shift, from, next) = (out.count - range.lowerBound, range.lowerBound, 0)
            for place in 0..<previous.order.count where spans[4 * place + slot] >= 0 {
                let start = 4 * place + slot
                let (oldStart, oldEnd) = (spans[start], spans[start + 1])
                spans[start] += shift
                if next < edits.count && edits[next].place == place {
                    let text = edits[next].texts[slot / 2]
                    out.append(contentsOf: previous.bytes[from..<oldStart])
                    out.append(contentsOf: text)
                    (from, shift, next) = (oldEnd, shift + text.count - oldEnd + oldStart, next + 1)
                }
                spans[start + 1] += shift
            }
            out.append(contentsOf: previous.bytes[from..<range.upperBound])
        } spans: {
            spans
        }
        file.isCopy = true
        return file
    }
}

/// A file as ``StoreDocument/encode(file:limits:after:changedKeys:)`` wrote
/// it, kept by a store for its next write.
struct EncodedFile: Sendable {
    var bytes: [UInt8]
    /// The keys' bytes, by their number in `values` when the file was
    /// encoded, and those numbers in the order of the keys' bytes.
    var keys: ByteKeySort
    var order: [Int]
    /// Per place in `order`, where its value's text starts and ends in
    /// `bytes`, then its record's (-1 when it has none).
    var spans: [Int]
    /// Where the `values` member's text and the `modified` one's lie.
    var valuesMember: Range<Int>
    var modifiedMember: Range<Int>?
    /// Whether it was copied from the file before it.
    var isCopy = false

    /// The place in `order` of the key with exactly `key`'s bytes.
    func place(of key: String) -> Int? {
        var key = key
        return key.withUTF8 { wanted in
            var (low, high) = (0, order.count)
            while low < high {
                let middle = (low + high) / 2
                let (before, equal) = keys.withKey(order[middle]) {
                    ($0.lexicographicallyPrecedes(wanted), $0.elementsEqual(wanted))
                }
                if equal { return middle }
                if before { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }
}

/// The stored values as the file writes them, in the order of the
/// dictionary's indices: each key's bytes, each value's text as it is
/// written at its place (indent 2), and each key's change record.
private struct StoredEntries {
    var keys: ByteKeySort
    /// The values' texts, one after another; each ends at its `textEnds`.
    var texts: [UInt8] = []
    var textEnds: [Int] = []
    /// Each key's record number among `modifications.distinctRecords`, or -1.
    var recordNumbers: [Int32] = []

    init(_ document: StoreDocument, file: String, limits: PreferencesLimits) throws {
        let (values, modifications) = (document.values, document.modifications)
        keys = ByteKeySort(capacity: values.count)
        texts.reserveCapacity(values.count * 32)
        textEnds.reserveCapacity(values.count)
        recordNumbers.reserveCapacity(values.count)
        for (key, value) in values {
            switch value {
            case .array, .object:
                if value.depth > limits.maxDepth {
                    throw PreferencesError.limitExceeded(
                        file: file,
                        reason:
                            "the value of '\(key)' is nested \(value.depth) levels deep, over the limit of \(limits.maxDepth)"
                    )
                }
            default: break
            }
            keys.append(key)
            Self.write(value, into: &texts)
            textEnds.append(texts.count)
            recordNumbers.append(
                modifications.recordNumber(forKey: key, isStored: true).map(Int32.init) ?? -1)
        }
    }

    /// Writes `value`'s text as it stands in `values` (indent 2); strings,
    /// the common case, straight from their bytes.
    static func write(_ value: PreferenceValue, into texts: inout [UInt8]) {
        if case .string(let text) = value,
            text.utf8.withContiguousStorageIfAvailable({
                JSONText.writeString(bytes: $0, into: &texts)
            }) != nil
        {
            return
        }
        JSONText.write(value, into: &texts, pretty: true, indent: 2)
    }
}

/// Each distinct change record some key has, formatted once, one after
/// another.
private struct RecordTexts {
    var bytes: [UInt8] = []
    /// Where each record's text starts and ends in `bytes`; -1 before it
    /// is written.
    var starts: [Int]
    var ends: [Int]
    /// Whether some key has a record (and the file a `modified` member).
    var any = false

    init(_ records: [ChangeRecord], of entries: StoredEntries) {
        starts = [Int](repeating: -1, count: records.count)
        ends = starts
        for number in entries.recordNumbers where number >= 0 && starts[Int(number)] < 0 {
            starts[Int(number)] = bytes.count
            records[Int(number)].write(into: &bytes)
            ends[Int(number)] = bytes.count
            any = true
        }
    }
}

/// The top-level members in the order of their names' bytes, each with
/// its head (`,\n  "name" : `) and, but for `values` and `modified`, its
/// text.
private struct Layout {
    /// A top-level member, and how it is written.
    enum Member {
        /// Through the general writer (``StoreDocument/plainMembers``).
        case plain(PreferenceValue)
        /// From the stored entries, key by key.
        case values, modified
        /// One entry a line (``DocumentHistory/write(into:)``).
        case history
    }

    var members: [(member: Member, head: [UInt8], text: [UInt8])] = []
    /// About the size of the file, for its buffer.
    var size: Int

    /// The members of `document` (`modified` when some key `hasRecords`).
    init(_ document: StoreDocument, hasRecords: Bool, sizeGuess: Int) {
        size = sizeGuess
        var named = document.plainMembers.map { (name: $0.key, member: Member.plain($0.value)) }
        named.append(("values", .values))
        if hasRecords { named.append(("modified", .modified)) }
        if !document.history.carried.isEmpty { named.append(("history", .history)) }
        named.sort { JSONText.precedesByBytes($0.name, $1.name) }
        for (position, (name, member)) in named.enumerated() {
            var head: [UInt8] = position > 0 ? [UInt8(ascii: ",")] : []
            JSONText.newline(into: &head, indent: 1)
            JSONText.writeString(name, into: &head)
            head.append(contentsOf: " : ".utf8)
            var text: [UInt8] = []
            switch member {
            case .plain(let value): JSONText.write(value, into: &text, pretty: true, indent: 1)
            case .history: document.history.write(into: &text)
            case .values, .modified: break
            }
            size += head.count + text.count
            members.append((member, head, text))
        }
    }

    /// The file put together from its pieces, `values` and `modified` each
    /// in the key order `order`, with each entry's spans.
    func file(entries: StoredEntries, records: RecordTexts, order: [Int]) -> EncodedFile {
        var spans = [Int](repeating: -1, count: 4 * order.count)
        return file(keys: entries.keys, order: order) { isValues, out in
            var first = true
            for (place, index) in order.enumerated() {
                let text: ArraySlice<UInt8>
                if isValues {
                    let start = index == 0 ? 0 : entries.textEnds[index - 1]
                    text = entries.texts[start..<entries.textEnds[index]]
                } else {
                    let number = Int(entries.recordNumbers[index])
                    guard number >= 0 else { continue }
                    text = records.bytes[records.starts[number]..<records.ends[number]]
                }
                out.append(contentsOf: first ? "{\n    ".utf8 : ",\n    ".utf8)
                first = false
                entries.keys.withKey(index) { JSONText.writeString(bytes: $0, into: &out) }
                out.append(contentsOf: " : ".utf8)
                let slot = 4 * place + (isValues ? 0 : 2)
                spans[slot] = out.count
                out.append(contentsOf: text)
                spans[slot + 1] = out.count
            }
            out.append(contentsOf: first ? "{}".utf8 : "\n  }".utf8)
        } spans: {
            spans
        }
    }

    /// The file, with `write` writing the texts of `values` (given true)
    /// and `modified`; `spans` gives their entries' spans once written.
    func file(
        keys: ByteKeySort, order: [Int], write: (Bool, inout [UInt8]) -> Void,
        spans: () -> [Int]
    ) -> EncodedFile {
        var (bytes, valuesMember, modifiedMember): ([UInt8], Range<Int>, Range<Int>?) = (
            [UInt8(ascii: "{")], 0..<0, nil
        )
        bytes.reserveCapacity(size)
        for (member, head, text) in members {
            bytes.append(contentsOf: head)
            let start = bytes.count
            switch member {
            case .values:
                write(true, &bytes)
                valuesMember = start..<bytes.count
            case .modified:
                write(false, &bytes)
                modifiedMember = start..<bytes.count
            case .plain, .history: bytes.append(contentsOf: text)
            }
        }
        bytes.append(contentsOf: "\n}\n".utf8)
        return EncodedFile(
            bytes: bytes, keys: keys, order: order, spans: spans(), valuesMember: valuesMember,
            modifiedMember: modifiedMember)
    }
}
