/// Checking JSON without building it: a value is checked with the errors
/// ``parseValue(depth:)`` throws, at the same places, and only where it is
/// in the text kept, for a reader that builds it later or never.
extension JSONText.Parser {
    /// The elements of the array at `index`, each checked by
    /// ``skipValue(depth:)``, as their places in the text.
    mutating func skimArray(depth: Int) throws -> [Range<Int>] {
        var elements: [Range<Int>] = []
        try walk(depth: depth) { parser in
            let start = parser.index
            try parser.skipValue(depth: depth)
            elements.append(start..<parser.index)
        }
        return elements
    }

    /// Moves past one value, throwing the errors ``parseValue(depth:)``
    /// throws at the same places, without building it.
    mutating func skipValue(depth: Int) throws {
        guard index < bytes.count else { throw error("unexpected end of text") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = bytes[index] == UInt8(ascii: "{")
            try walk(depth: depth + 1) { parser in
                if isObject {
                    let keyStart = parser.index
                    try parser.skipString()
                    try parser.skipColon(afterKeyAt: keyStart)
                }
                try parser.skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "\""): try skipString()
        default: _ = try parseValue(depth: depth)
        }
    }

    /// Moves past a string, with ``parseString()``'s checks: plain
    /// ASCII is only scanned; anything else is parsed.
    private mutating func skipString() throws {
        let (scan, ascii) = plainRun(from: index + 1)
        if ascii, scan < bytes.count, bytes[scan] == UInt8(ascii: "\"") {
            index = scan + 1
            return
        }
        _ = try parseString()
    }

    /// Where the run of plain string bytes from `start` ends: the offset
    /// of the first `"`, `\\` or control character (below 0x20), or the
    /// end of the text; and whether every byte before it is ASCII.
    ///
    /// Eight bytes are tested at a time, as in ``needsEscaping(_:)``:
    /// `(x - 0x01…) & ~x & 0x80…` flags the bytes of `x` that are zero,
    /// and the lowest flag is always a true one (a false flag needs a
    /// borrow from a true one below it), so the first flagged byte of
    /// `word ^ "…`, `word ^ \\…` or `word - 0x20…` is the first stop.
    func plainRun(from start: Int) -> (end: Int, ascii: Bool) {
        let raw = UnsafeRawBufferPointer(bytes)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits = ones &* 0x80
        var offset = start
        // Every byte passed, OR-ed: its high bits say whether one was not ASCII.
        var passed: UInt64 = 0
        while offset + 8 <= raw.count {
            let word = UInt64(
                littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let quote = (word ^ (ones &* 0x22)) &- ones
            let backslash = (word ^ (ones &* 0x5C)) &- ones
            let control = word &- ones &* 0x20
            let stops = (quote | backslash | control) & ~word & highBits
            if stops != 0 {
                // The first stop's byte number; only the bytes before it count.
                let before = stops.trailingZeroBitCount / 8
                if before > 0 { passed |= word & (UInt64.max >> (64 - 8 * before)) }
                return (offset + before, passed & highBits == 0)
            }
            passed |= word
            offset += 8
        }
        while offset < raw.count {
            let byte = raw[offset]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            passed |= UInt64(byte)
            offset += 1
        }
        return (offset, passed & highBits == 0)
    }
}
