/// Reading a file's text (<doc:FileFormat>), the first step of
/// ``StoreDocument/decode(_:file:limits:)``: the one JSON object, read
/// through the general reader (`JSONText`) with its errors at its places,
/// but for three members, which the layout has the store read its own way:
///
/// - `values`: where each key is in the text is kept, in the text's order,
///   which a dictionary forgets. A file the store wrote lists `modified`
///   in the same order, so ``ChangeLog`` pairs each key with its record by
///   comparing bytes, without hashing the keys again.
/// - `modified`: each entry is checked as JSON but not built; most repeat
///   one record, which ``ChangeLog`` builds once.
/// - `history`: each entry is checked but not built; ``DocumentHistory``
///   keeps their texts.
///
/// `JSONText.parse` reads every file as this does, but for building those
/// members' values; the tests compare the two on every truncation and
/// damaged byte of sample documents. The layout
/// (`StoreDocument+Encoding.swift`) writes those members in the order and
/// form this expects.
extension StoreDocument {
    /// A file's JSON value, as `JSONText.parse` reads it but with `null`
    /// for a `modified` object and a `history` array, whose parts are
    /// beside it. Of a repeated member the last counts, as in the value.
    struct Text {
        var value: PreferenceValue
        /// The entries of the `modified` object, in the order of the text;
        /// nil when that member is no object.
        var recordEntries: [RecordEntry]?
        /// Where the keys of the `values` object are, as string literals
        /// (quotes included), in the order of the text, duplicates
        /// included; nil when that member is no object.
        var valuesKeyOrder: [Range<Int>]?
        /// Where the elements of the `history` array are, in the order of
        /// the text; nil when that member is no array.
        var historyElements: [Range<Int>]?
    }

    /// An entry of `modified`, checked but not built: where its key and
    /// its value are in the text.
    struct RecordEntry {
        /// The key's string literal, quotes included.
        var quotedKey: Range<Int>
        /// Whether the key is its text between the quotes as it stands (no
        /// escapes), so that it is made straight from those bytes.
        var keyIsLiteral: Bool
        /// The entry's value.
        var value: Range<Int>

        /// The key's UTF-8, between the quotes (its value when ``keyIsLiteral``).
        var keyText: Range<Int> { quotedKey.lowerBound + 1..<quotedKey.upperBound - 1 }

        /// The key, from the text it was read from (and checked in).
        func key(in bytes: [UInt8]) -> String {
            if keyIsLiteral { return String(decoding: bytes[keyText], as: UTF8.self) }
            let parsed = try? JSONText.parse(Array(bytes[quotedKey]), source: "", maxDepth: 1)
            guard case .string(let key)? = parsed else {
                preconditionFailure("a record entry's key was checked when it was read")
            }
            return key
        }
    }

    /// Reads `bytes` as one JSON value, with `JSONText.parse`'s errors;
    /// `source` names the file in them, and arrays and objects nested
    /// deeper than `maxDepth` are an error.
    static func readText(_ bytes: [UInt8], source: String, maxDepth: Int) throws -> Text {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONText.Parser(bytes: buffer, source: source, maxDepth: maxDepth)
            var text = Text(value: .null)
            parser.skipWhitespace()
            if parser.index < buffer.count, buffer[parser.index] == UInt8(ascii: "{") {
                // The object is one level deep, and its members' values are
                // read at that level; what they hold starts at the next.
                let value = try parser.parseObject(depth: 1) { parser, key, _ in
                    let opening = parser.index < buffer.count ? buffer[parser.index] : 0
                    switch key {
                    case "values" where opening == UInt8(ascii: "{"):
                        var order: [Range<Int>] = []
                        let values = try parser.parseObject(depth: 2) { parser, _, keyLiteral in
                            order.append(keyLiteral)
                            return try parser.parseValue(depth: 2)
                        }
                        text.valuesKeyOrder = order
                        return values
                    case "modified" where opening == UInt8(ascii: "{"):
                        text.recordEntries = try parser.skimRecordEntries(depth: 2)
                        return .null
                    case "history" where opening == UInt8(ascii: "["):
                        text.historyElements = try parser.skimArray(depth: 2)
                        return .null
                    case "values": text.valuesKeyOrder = nil
                    case "modified": text.recordEntries = nil
                    case "history": text.historyElements = nil
                    default: break
                    }
                    return try parser.parseValue(depth: 1)
                }
                text.value = value
            } else {
                text.value = try parser.parseValue(depth: 0)
            }
            parser.skipWhitespace()
            if parser.index != buffer.count {
                throw parser.error("unexpected text after the end of the JSON value")
            }
            return text
        }
    }
}

extension JSONText.Parser {
    /// The entries of the `modified` object at `index`: each key, and
    /// where its value is, checked by ``skipValue(depth:)`` (so with the
    /// errors of ``parseValue(depth:)``, at the same places) but not built.
    mutating func skimRecordEntries(depth: Int) throws -> [StoreDocument.RecordEntry] {
        var found: [StoreDocument.RecordEntry] = []
        // Room for a small store's entries without growing.
        found.reserveCapacity(32)
        // The last value that ends at a delimiter of its own (an object,
        // array or string) and was checked in full.
        var checked: Range<Int>?
        try walk(depth: depth) { parser in
            found.append(try parser.skimRecordEntry(depth: depth, after: &checked))
        }
        return found
    }

    /// The entry of `modified` at `index` (its key's opening quote), moved
    /// past; `checked` is the last value checked in full, which a value of
    /// the same bytes need not be checked again against.
    private mutating func skimRecordEntry(depth: Int, after checked: inout Range<Int>?) throws
        -> StoreDocument.RecordEntry
    {
        // The key is checked as `parseString()` checks it, but made
        // a `String` only when it is not its text as it stands.
        let keyStart = index
        let (keyEnd, ascii) = plainRun(from: index + 1)
        let literal = keyEnd < bytes.count && bytes[keyEnd] == UInt8(ascii: "\"")
        if literal && ascii {
            index = keyEnd + 1
        } else {
            _ = try parseString()
        }
        let quotedKey = keyStart..<index
        try skipColon(afterKeyAt: keyStart)
        let start = index
        if let last = checked, start + last.count <= bytes.count,
            JSONText.sameBytes(
                UnsafeRawBufferPointer(bytes), last, start..<start + last.count)
        {
            // The same bytes as the value checked last (most entries
            // repeat one change record): checking them again would
            // find the same value, ending at the same offset, with no
            // error. Only a value that ends at its own delimiter can
            // be matched so; a number's end depends on what follows.
            index = start + last.count
        } else {
            try skipValue(depth: depth)
            switch bytes[start] {
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""):
                checked = start..<index
            default:
                checked = nil
            }
        }
        return StoreDocument.RecordEntry(
            quotedKey: quotedKey, keyIsLiteral: literal, value: start..<index)
    }

}
