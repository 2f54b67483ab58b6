/// The preferences file layout (<doc:FileFormat>): a JSON object with the layout's
/// `format` (1), the app's data `version` (0 when absent), the stored
/// `values`, and for each stored key when and by whom it was last changed
/// (`modified`, S18 in <doc:StoreGuarantees>).
///
/// ```json
/// {
///   "format" : 1,
///   "modified" : {
///     "dark_mode" : { "at" : "2026-12-01T09:30:12.345Z", "by" : "alice", "program" : "prefs" }
///   },
///   "values" : {
///     "dark_mode" : true
///   },
///   "version" : 2
/// }
/// ```
///
/// Top-level members this version does not know are kept as they are and
/// written back unchanged, as records keep fields they do not declare
/// (R3, <doc:Records>),
/// so a later addition to the layout never makes a file unreadable to an
/// older reader, and an older writer never drops it.
struct StoreDocument: Sendable, Equatable {
    static let currentFormat: Int64 = 1
    static let knownMembers = Set([
        "format", "modified", "values", "version", "temporary", "secrets",
    ])
    .union(DocumentHistory.memberNames)

    var values: [String: PreferenceValue]
    var version: Int
    /// When and by whom each stored key was last changed; only stored keys have one.
    var modifications: ChangeLog
    /// Top-level members this version does not know, kept for writing back.
    var otherMembers: [String: PreferenceValue]
    /// The sequence number and the history entries it carries (<doc:HistoryAndUndo>).
    var history: DocumentHistory
    /// Values that hold until a time (<doc:ChangingSettingsSafely>); `values`
    /// has what the keys read once they end.
    var temporary = TemporaryValues()
    /// The keys some program declared secret (the member `secrets`): every
    /// writer keeps their values out of the history and the file private.
    var secretKeys: Set<String> = []

    init(
        values: [String: PreferenceValue] = [:], version: Int = 0,
        modifications: ChangeLog = ChangeLog(),
        otherMembers: [String: PreferenceValue] = [:], history: DocumentHistory = DocumentHistory()
    ) {
        self.values = values
        self.version = version
        self.modifications = modifications
        self.otherMembers = otherMembers
        self.history = history
    }

    /// The document an edit of `base` writes: `values` and `version`, with
    /// `stamp` on every key whose value changed, the earlier records of the
    /// keys that did not, none for removed keys, and `base`'s other members.
    ///
    /// `changedKeys`, when the caller knows them, are the keys whose value
    /// differs between `base` and `values`; the change records are then
    /// worked out from those keys alone where that gives the same log.
    init(
        editing base: PreferencesSnapshot, values: [String: PreferenceValue], version: Int,
        stamp: PreferenceModification, changedKeys: [String]? = nil
    ) {
        let record = ChangeRecord(stamp)
        let modifications =
            changedKeys.flatMap {
                ChangeLog(
                    editing: base.modifications, baseValues: base.values, values: values,
                    changedKeys: $0, stamp: record)
            }
            ?? ChangeLog(
                editing: base.modifications, baseValues: base.values, values: values,
                stamp: record)
        self.init(
            values: values, version: version, modifications: modifications,
            otherMembers: base.otherMembers, history: base.history)
        self.temporary = base.temporary
        self.secretKeys = base.secretKeys
    }

    /// Reads a file's bytes; every problem is ``PreferencesError/corrupted(file:reason:)``.
    static func decode(_ bytes: [UInt8], file: String, limits: PreferencesLimits) throws
        -> StoreDocument
    {
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.corrupted(
                file: file,
                reason: "file is \(bytes.count) bytes, over the limit of \(limits.maxFileSize)")
        }
        if bytes.isEmpty {
            throw PreferencesError.corrupted(file: file, reason: "the file is empty")
        }
        // The `modified` member's entries are checked as JSON but not built:
        // most of them repeat the same record, which is built once below.
        // The keys of `values` come in the order of the text as well, to
        // pair them with those entries (see `ChangeLog`).
        let parsed: JSONText.Document
        do {
            // The envelope and `values` add two levels above the stored values.
            parsed = try JSONText.parseDocument(
                bytes, source: file, maxDepth: limits.maxDepth + 2, deferring: "modified",
                keyOrderOf: "values", skimming: "history")
        } catch PreferencesError.corrupted(_, let reason) {
            throw PreferencesError.corrupted(file: file, reason: "not valid JSON: \(reason)")
        }
        let root = parsed.value
        guard case .object(let fields) = root else {
            throw PreferencesError.corrupted(
                file: file,
                reason: "expected a JSON object at the top, found \(root.typeDescription)")
        }
        guard let format = fields["format"] else {
            throw PreferencesError.corrupted(file: file, reason: "missing the \"format\" field")
        }
        guard format == .int(currentFormat) else {
            throw PreferencesError.corrupted(
                file: file,
                reason:
                    "unknown format \(format.jsonText) (this version reads format \(currentFormat))"
            )
        }
        var version = 0
        if let stored = fields["version"] {
            guard case .int(let number) = stored, number >= 0, let value = Int(exactly: number)
            else {
                throw PreferencesError.corrupted(
                    file: file,
                    reason: "\"version\" must be a non-negative integer, found \(stored.jsonText)")
            }
            version = value
        }
        guard case .object(let values)? = fields["values"] else {
            throw PreferencesError.corrupted(
                file: file, reason: "missing the \"values\" object")
        }
        for key in values.keys {
            if let problem = limits.problem(withKey: key) {
                throw PreferencesError.corrupted(
                    file: file, reason: "stored key \(key.debugDescription.prefix(80)): \(problem)")
            }
        }
        var modifications = ChangeLog()
        if let recordEntries = parsed.deferred {
            modifications = ChangeLog(
                storedKeys: values.keys, storedOrder: parsed.keyOrder, entries: recordEntries,
                in: bytes, file: file)
        }
        let history = try DocumentHistory(
            fields: fields, elements: parsed.skimmed, in: bytes, file: file)
        let temporary = TemporaryValues(member: fields["temporary"])
        var secretKeys: Set<String> = []
        if case .array(let names)? = fields["secrets"] {
            for case .string(let name) in names { secretKeys.insert(name) }
        }
        // Usually every member is a known one, and there is nothing to keep.
        var knownCount =
            2 + (fields["version"] == nil ? 0 : 1) + (fields["modified"] == nil ? 0 : 1)
        for name in DocumentHistory.memberNames where fields[name] != nil { knownCount += 1 }
        if fields["temporary"] != nil { knownCount += 1 }
        if fields["secrets"] != nil { knownCount += 1 }
        var document = StoreDocument(
            values: values, version: version, modifications: modifications,
            otherMembers: fields.count == knownCount
                ? [:] : fields.filter { !knownMembers.contains($0.key) }, history: history)
        document.temporary = temporary
        document.secretKeys = secretKeys
        return document
    }

    /// The file's bytes: pretty-printed, keys sorted, newline at the end.
    ///
    /// Written here rather than through one `PreferenceValue` tree, with the
    /// same bytes as `JSONText` writes for it. One walk over `values` copies
    /// each key's bytes into one buffer and writes each value's text into
    /// another; the keys are then sorted once (as bytes, `ByteKeySort`) for
    /// both `values` and `modified`, each distinct change record is
    /// formatted once however many keys share it, and the file is put
    /// together from those pieces in a buffer of its final size.
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
        let count = values.count
        var keys = ByteKeySort(capacity: count)
        // Each value as it is written at its place (indent 2), one after another.
        var texts: [UInt8] = []
        texts.reserveCapacity(count * 32)
        var textEnds: [Int] = []
        textEnds.reserveCapacity(count)
        // Each key's record number among `modifications.distinctRecords`, or -1.
        var recordNumbers: [Int32] = []
        recordNumbers.reserveCapacity(count)
        var anyRecord = false
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
        let order = keys.sortedOrder(reusing: hint)

        // Keys that need escapes (rare) are written from their escaped text.
        var escapedKeys: [Int: [UInt8]] = [:]
        var quotedKeySizes: [Int] = []
        quotedKeySizes.reserveCapacity(count)
        keys.bytes.withUnsafeBufferPointer { keyBytes in
            for index in 0..<count {
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
        // Each distinct record that some key has, formatted once, one after
        // another in `recordBytes`.
        var recordBytes: [UInt8] = []
        // Where each record's text starts and ends in `recordBytes`; -1
        // before it is written.
        var recordStarts = [Int](repeating: -1, count: modifications.distinctRecords.count)
        var recordEnds = recordStarts
        var modifiedSize = 4  // "\n  }" (the "{" is counted as the first ",")
        if anyRecord {
            for index in 0..<count where recordNumbers[index] >= 0 {
                let number = Int(recordNumbers[index])
                if recordStarts[number] < 0 {
                    recordStarts[number] = recordBytes.count
                    modifications.distinctRecords[number].write(into: &recordBytes)
                    recordEnds[number] = recordBytes.count
                }
                // ",\n    " before each member and " : " after its key.
                modifiedSize +=
                    9 + quotedKeySizes[index] + recordEnds[number] - recordStarts[number]
            }
        }
        var valuesSize = count == 0 ? 2 : 4 + texts.count
        for size in quotedKeySizes { valuesSize += 9 + size }

        // The top-level members, in the order of their names' bytes, each
        // with its text (`values` and `modified` are written below).
        var names = otherMembers.keys.filter { !Self.knownMembers.contains($0) }
        var historyMembers = history.members
        historyMembers["temporary"] = temporary.member
        if !secretKeys.isEmpty {
            historyMembers["secrets"] = .array(
                secretKeys.sorted(by: JSONText.precedesByBytes).map(PreferenceValue.string))
        }
        names += historyMembers.keys
        if !history.carried.isEmpty { names.append("history") }
        names += ["format", "values", "version"]
        if anyRecord { names.append("modified") }
        names.sort(by: JSONText.precedesByBytes)
        var heads: [[UInt8]] = []
        var memberTexts: [[UInt8]] = []
        var size = 4  // "{", "\n}\n"
        for (position, name) in names.enumerated() {
            var head: [UInt8] = position > 0 ? [UInt8(ascii: ",")] : []
            JSONText.newline(into: &head, indent: 1)
            JSONText.writeString(name, into: &head)
            head += Self.separator
            var text: [UInt8] = []
            switch name {
            case "format": JSONText.writeInteger(Self.currentFormat, into: &text)
            case "version": JSONText.writeInteger(Int64(version), into: &text)
            case "values": size += valuesSize
            case "modified": size += modifiedSize
            case "history": history.write(into: &text)
            default:
                JSONText.write(
                    historyMembers[name] ?? otherMembers[name]!, into: &text, pretty: true,
                    indent: 1)
            }
            size += head.count + text.count
            heads.append(head)
            memberTexts.append(text)
        }

        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var out = ByteCursor(buffer)
            keys.bytes.withUnsafeBufferPointer { keyBytes in
                texts.withUnsafeBufferPointer { texts in
                    recordBytes.withUnsafeBufferPointer { recordBytes in
                        /// `values` or `modified`: each key in order (those
                        /// that have a text), with its text.
                        func writeMembers(text: (Int) -> UnsafeBufferPointer<UInt8>?) {
                            var first = true
                            for index in order {
                                guard let text = text(index) else { continue }
                                out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
                                first = false
                                out.append("\n    ")
                                if !escapedKeys.isEmpty, let quoted = escapedKeys[index] {
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
                        for (position, name) in names.enumerated() {
                            heads[position].withUnsafeBufferPointer { out.append($0) }
                            switch name {
                            case "values":
                                writeMembers { index in
                                    let start = index == 0 ? 0 : textEnds[index - 1]
                                    return UnsafeBufferPointer(
                                        rebasing: texts[start..<textEnds[index]])
                                }
                            case "modified":
                                writeMembers { index in
                                    let number = Int(recordNumbers[index])
                                    return number < 0
                                        ? nil
                                        : UnsafeBufferPointer(
                                            rebasing: recordBytes[
                                                recordStarts[number]..<recordEnds[number]])
                                }
                            default:
                                memberTexts[position].withUnsafeBufferPointer { out.append($0) }
                            }
                        }
                        out.append("\n}\n")
                    }
                }
            }
            precondition(out.count == size, "the file's size was worked out wrong")
            initialized = out.count
        }
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the new contents are \(bytes.count) bytes, over the limit of \(limits.maxFileSize)"
            )
        }
        return (bytes, order)
    }

    private static let separator = Array(" : ".utf8)

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

    static func == (lhs: StoreDocument, rhs: StoreDocument) -> Bool {
        lhs.values == rhs.values && lhs.version == rhs.version
            && lhs.otherMembers == rhs.otherMembers
            && lhs.modifications.matches(rhs.modifications, storedKeys: lhs.values.keys)
    }
}
