/// The file's bytes (<doc:FileFormat>): pretty-printed, keys sorted,
/// newline at the end.
///
/// Written here rather than through one `PreferenceValue` tree, with the
/// same bytes as `JSONText` writes for it. One walk over `values` copies
/// each key's bytes into one buffer and writes each value's text into
/// another (`StoredEntries`); the keys are then sorted once (as bytes,
/// `ByteKeySort`) for both `values` and `modified`, each distinct change
/// record is formatted once however many keys share it (`RecordTexts`),
/// and the file is put together from those pieces in a buffer of its final
/// size (`Layout`).
extension StoreDocument {
    /// The file's bytes.
    func encode(file: String, limits: PreferencesLimits) throws -> [UInt8] {
        try encode(file: file, limits: limits, reusingKeyOrder: nil).bytes
    }

    /// ``encode(file:limits:)``, also returning the order the keys were
    /// sorted into (by their place in `values`); a later encoding of values
    /// with the same keys in the same table — the next write of a store
    /// whose edits changed no key's presence — passes it back and is spared
    /// the sort when it still holds (``ByteKeySort/sortedOrder(reusing:)``).
    func encode(file: String, limits: PreferencesLimits, reusingKeyOrder hint: [Int]?) throws
        -> (bytes: [UInt8], keyOrder: [Int])
    {
        let entries = try StoredEntries(self, file: file, limits: limits)
        let order = entries.keys.sortedOrder(reusing: hint)
        let records = RecordTexts(modifications.distinctRecords, of: entries)
        let bytes = Layout(self, entries: entries, records: records)
            .bytes(entries: entries, records: records, order: order)
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the new contents are \(bytes.count) bytes, over the limit of \(limits.maxFileSize)"
            )
        }
        return (bytes, order)
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
    var anyRecord = false
    /// The keys that need escapes (rare), as their quoted text.
    var escapedKeys: [Int: [UInt8]] = [:]
    /// Each key's size, quotes included.
    var quotedKeySizes: [Int] = []

    init(_ document: StoreDocument, file: String, limits: PreferencesLimits) throws {
        let (values, modifications) = (document.values, document.modifications)
        keys = ByteKeySort(capacity: values.count)
        texts.reserveCapacity(values.count * 32)
        textEnds.reserveCapacity(values.count)
        recordNumbers.reserveCapacity(values.count)
        // The keys the change log lists by name, by their place in `values`
        // (which is walked in the order of its indices): when they are few,
        // every other key has the shared record, found without hashing it.
        let listed = modifications.listedRecordNumbers(in: values)
        let shared = modifications.sharedRecordNumber
        var nextListed = 0
        var position = values.startIndex
        while position != values.endIndex {
            let (key, value) = values[position]
            defer { values.formIndex(after: &position) }
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
            // Strings, the common case, straight from their bytes.
            var written = false
            if case .string(let text) = value {
                written =
                    text.utf8.withContiguousStorageIfAvailable {
                        JSONText.writeString(bytes: $0, into: &texts)
                    } != nil
            }
            if !written { JSONText.write(value, into: &texts, pretty: true, indent: 2) }
            textEnds.append(texts.count)
            let number: Int32
            if let listed {
                if nextListed < listed.count && listed[nextListed].index == position {
                    number = listed[nextListed].number
                    nextListed += 1
                } else {
                    number = shared
                }
            } else {
                number =
                    modifications.recordNumber(forKey: key, isStored: true).map { Int32($0) } ?? -1
            }
            recordNumbers.append(number)
            anyRecord = anyRecord || number >= 0
        }
        quoteKeys()
    }

    /// Finds each key's quoted size, and the keys that need escapes.
    private mutating func quoteKeys() {
        quotedKeySizes.reserveCapacity(keys.count)
        keys.bytes.withUnsafeBufferPointer { keyBytes in
            for index in 0..<keys.count {
                let bytes = UnsafeBufferPointer(
                    rebasing: keyBytes[keys.starts[index]..<keys.starts[index + 1]])
                if JSONText.needsEscaping(bytes) {
                    var quoted: [UInt8] = []
                    JSONText.writeString(bytes: bytes, into: &quoted)
                    escapedKeys[index] = quoted
                    quotedKeySizes.append(quoted.count)
                } else {
                    quotedKeySizes.append(bytes.count + 2)
                }
            }
        }
    }

    /// The size of the `values` member's text.
    var valuesSize: Int {
        var size = keys.count == 0 ? 2 : 4 + texts.count
        for quoted in quotedKeySizes { size += 9 + quoted }
        return size
    }
}

/// Each distinct change record some key has, formatted once, one after
/// another, and the size of the `modified` member they make.
private struct RecordTexts {
    var bytes: [UInt8] = []
    /// Where each record's text starts and ends in `bytes`; -1 before it
    /// is written.
    var starts: [Int]
    var ends: [Int]
    /// The size of the `modified` member's text; nil when no key has a
    /// record, and the file has no such member.
    var memberSize: Int?

    init(_ records: [ChangeRecord], of entries: StoredEntries) {
        starts = [Int](repeating: -1, count: records.count)
        ends = starts
        guard entries.anyRecord else { return }
        var size = 4  // "\n  }" (the "{" is counted as the first ",")
        for index in entries.recordNumbers.indices where entries.recordNumbers[index] >= 0 {
            let number = Int(entries.recordNumbers[index])
            if starts[number] < 0 {
                starts[number] = bytes.count
                records[number].write(into: &bytes)
                ends[number] = bytes.count
            }
            // ",\n    " before each member and " : " after its key.
            size += 9 + entries.quotedKeySizes[index] + ends[number] - starts[number]
        }
        memberSize = size
    }
}

/// The top-level members in the order of their names' bytes, each with
/// its head (`,\n  "name" : `) and, but for `values` and `modified`, its
/// text; and the size of the file they make.
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
    var size = 4  // "{", "\n}\n"

    init(_ document: StoreDocument, entries: StoredEntries, records: RecordTexts) {
        var named = document.plainMembers.map { (name: $0.key, member: Member.plain($0.value)) }
        named.append(("values", .values))
        if records.memberSize != nil { named.append(("modified", .modified)) }
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
            case .values: size += entries.valuesSize
            case .modified: size += records.memberSize ?? 0
            case .history: document.history.write(into: &text)
            }
            size += head.count + text.count
            members.append((member, head, text))
        }
    }

    /// The file, put together from its pieces, `values` and `modified`
    /// each in the key order `order`.
    func bytes(entries: StoredEntries, records: RecordTexts, order: [Int]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var out = ByteCursor(buffer)
            let keys = entries.keys
            keys.bytes.withUnsafeBufferPointer { keyBytes in
                entries.texts.withUnsafeBufferPointer { texts in
                    records.bytes.withUnsafeBufferPointer { recordBytes in
                        /// `values` or `modified`: each key in order (those
                        /// that have a text), with its text.
                        func writeMembers(text: (Int) -> UnsafeBufferPointer<UInt8>?) {
                            var first = true
                            for index in order {
                                guard let text = text(index) else { continue }
                                out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
                                first = false
                                out.append("\n    ")
                                if !entries.escapedKeys.isEmpty,
                                    let quoted = entries.escapedKeys[index]
                                {
                                    quoted.withUnsafeBufferPointer { out.append($0) }
                                } else {
                                    out.append(UInt8(ascii: "\""))
                                    out.append(
                                        UnsafeBufferPointer(
                                            rebasing: keyBytes[
                                                keys.starts[index]..<keys.starts[index + 1]]))
                                    out.append(UInt8(ascii: "\""))
                                }
                                out.append(" : ")
                                out.append(text)
                            }
                            out.append(first ? "{}" : "\n  }")
                        }
                        out.append(UInt8(ascii: "{"))
                        for (member, head, text) in members {
                            head.withUnsafeBufferPointer { out.append($0) }
                            switch member {
                            case .values:
                                writeMembers { index in
                                    let start = index == 0 ? 0 : entries.textEnds[index - 1]
                                    return UnsafeBufferPointer(
                                        rebasing: texts[start..<entries.textEnds[index]])
                                }
                            case .modified:
                                writeMembers { index in
                                    let number = Int(entries.recordNumbers[index])
                                    return number < 0
                                        ? nil
                                        : UnsafeBufferPointer(
                                            rebasing: recordBytes[
                                                records.starts[number]..<records.ends[number]])
                                }
                            case .plain, .history:
                                text.withUnsafeBufferPointer { out.append($0) }
                            }
                        }
                        out.append("\n}\n")
                    }
                }
            }
            precondition(out.count == size, "the file's size was worked out wrong")
            initialized = out.count
        }
    }
}

/// Writes into a buffer of a known size.
private struct ByteCursor {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func append(_ byte: UInt8) {
        precondition(count < buffer.count)
        buffer[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(buffer.count - count >= bytes.count)
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        (buffer.baseAddress! + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
