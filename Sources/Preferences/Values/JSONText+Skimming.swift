/// Checking JSON without building it: the members of the object the
/// store defers (``JSONText/parse(_:source:maxDepth:deferring:)``) are
/// checked with the same errors at the same places, and only their ranges
/// kept.
extension JSONText.Parser {
    /// The members of the object at `index`: each key, and the range of
    /// its value, checked by ``skipValue(depth:)``.
    mutating func skimObject(depth: Int) throws -> [JSONText.DeferredMember] {
        if depth > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
        index += 1
        var found: [JSONText.DeferredMember] = []
        // Room for a small store's entries without growing.
        found.reserveCapacity(32)
        // The last value that ends at a delimiter of its own (an object,
        // array or string) and was checked in full.
        var checked: Range<Int>?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return found
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of text in object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key, found \(describe(bytes[index]))")
            }
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
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                let end = index
                index = keyStart
                let key = try parseString()
                index = end
                throw error("expected ':' after key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let start = index
            if let checked, start + checked.count <= bytes.count,
                JSONText.sameBytes(
                    UnsafeRawBufferPointer(bytes), checked, start..<start + checked.count)
            {
                // The same bytes as the value checked last (most entries
                // repeat one change record): checking them again would
                // find the same value, ending at the same offset, with no
                // error. Only a value that ends at its own delimiter can
                // be matched so; a number's end depends on what follows.
                index = start + checked.count
            } else {
                try skipValue(depth: depth)
                switch bytes[start] {
                case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""):
                    checked = start..<index
                default:
                    checked = nil
                }
            }
            found.append(
                JSONText.DeferredMember(
                    quotedKey: quotedKey, keyIsLiteral: literal, value: start..<index))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of text in object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return found
            } else {
                throw error("expected ',' or '}' in object, found \(describe(bytes[index]))")
            }
        }
    }

    /// The elements of the array at `index`, each checked by
    /// ``skipValue(depth:)``, as their places in the text.
    mutating func skimArray(depth: Int) throws -> [Range<Int>] {
        if depth > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
        index += 1
        var elements: [Range<Int>] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            let start = index
            try skipValue(depth: depth)
            elements.append(start..<index)
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of text in array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            } else {
                throw error("expected ',' or ']' in array, found \(describe(bytes[index]))")
            }
        }
    }

    /// Moves past one value, throwing the errors ``parseValue(depth:)``
    /// throws at the same places, without building it.
    mutating func skipValue(depth: Int) throws {
        guard index < bytes.count else { throw error("unexpected end of text") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close =
                bytes[index] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            if depth + 1 > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if isObject {
                    guard index < bytes.count else {
                        throw error("unexpected end of text in object")
                    }
                    guard bytes[index] == UInt8(ascii: "\"") else {
                        throw error("expected a string key, found \(describe(bytes[index]))")
                    }
                    let keyStart = index
                    try skipString()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                        let end = index
                        index = keyStart
                        let key = try parseString()
                        index = end
                        throw error("expected ':' after key \"\(key)\"")
                    }
                    index += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                let kind = isObject ? "object" : "array"
                guard index < bytes.count else {
                    throw error("unexpected end of text in \(kind)")
                }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == close {
                    index += 1
                    return
                } else {
                    let expected = isObject ? "'}'" : "']'"
                    throw error(
                        "expected ',' or \(expected) in \(kind), found \(describe(bytes[index]))"
                    )
                }
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
