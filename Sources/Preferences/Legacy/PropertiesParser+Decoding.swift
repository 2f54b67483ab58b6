/// Decoding a properties file's bytes: checking UTF-8 (or turning
/// ISO-8859-1 into it), counting lines, and placing an offset at its line
/// and column for error messages.
extension PropertiesParser {
    /// The number of `\n` bytes in `word`: one bit a match, at the top of
    /// its byte, summed by a multiply.
    @inline(__always)
    static func newlines(_ word: UInt64) -> Int {
        Int(((ByteScan.matches(word, 0x0A) >> 7) &* 0x0101_0101_0101_0101) >> 56)
    }

    /// The number of `\n` bytes, eight bytes at a time.
    static func lineCount(_ units: UnsafeBufferPointer<UInt8>) -> Int {
        let raw = UnsafeRawBufferPointer(units)
        var count = 0
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            count += newlines(word)
            offset += 8
        }
        while offset < raw.count {
            if raw[offset] == 0x0A { count += 1 }
            offset += 1
        }
        return count
    }

    /// The offset of the first byte that does not start a well-formed UTF-8
    /// sequence, or nil when all of `bytes` is UTF-8; `lines` counts the
    /// `\n` bytes on the way (all of them when the text is valid).
    static func firstInvalidUTF8(_ bytes: [UInt8], lines: inout Int) -> Int? {
        bytes.withUnsafeBufferPointer { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var index = 0
            while index < bytes.count {
                // ASCII eight bytes at a time.
                if index + 8 <= bytes.count {
                    let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if word & 0x8080_8080_8080_8080 == 0 {
                        lines += newlines(word)
                        index += 8
                        continue
                    }
                }
                if bytes[index] < 0x80 {
                    if bytes[index] == 0x0A { lines += 1 }
                    index += 1
                    continue
                }
                guard let (_, length) = decodeUTF8(bytes, at: index) else { return index }
                index += length
            }
            return nil
        }
    }

    /// ISO-8859-1 maps each byte to the character of that number: bytes of
    /// 0x80 and above take two bytes in UTF-8.
    static func latin1AsUTF8(_ bytes: [UInt8]) -> [UInt8] {
        let high = bytes.reduce(0) { $0 + ($1 >= 0x80 ? 1 : 0) }
        if high == 0 { return bytes }
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count + high)
        for byte in bytes {
            if byte < 0x80 {
                text.append(byte)
            } else {
                text.append(0xC0 | byte >> 6)
                text.append(0x80 | byte & 0x3F)
            }
        }
        return text
    }

    /// The 1-based line and column (in characters) of the byte at `offset`.
    static func position(of offset: Int, in units: UnsafeBufferPointer<UInt8>) -> (
        line: Int, column: Int
    ) {
        var line = 1
        var column = 1
        var previousWasCR = false
        var index = 0
        while index < min(offset, units.count) {
            let unit = units[index]
            if unit == 0x0A {
                if !previousWasCR { line += 1 }
                column = 1
            } else if unit == 0x0D {
                line += 1
                column = 1
            } else if unit & 0xC0 != 0x80 {
                column += 1
            }
            previousWasCR = unit == 0x0D
            index += 1
        }
        return (line, column)
    }

    /// Decodes one well-formed UTF-8 sequence (no overlong forms, surrogates
    /// or values beyond U+10FFFF), or returns nil.
    static func decodeUTF8(_ bytes: [UInt8], at index: Int) -> (UInt32, Int)? {
        bytes.withUnsafeBufferPointer { decodeUTF8($0, at: index) }
    }

    static func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (UInt32, Int)? {
        let first = bytes[index]
        if first < 0x80 { return (UInt32(first), 1) }
        let length: Int
        var scalar: UInt32
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch first {
        case 0xC2...0xDF: length = 2; scalar = UInt32(first & 0x1F)
        case 0xE0: length = 3; scalar = 0; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; scalar = UInt32(first & 0x0F)
        case 0xED: length = 3; scalar = 0xD; upper = 0x9F
        case 0xF0: length = 4; scalar = 0; lower = 0x90
        case 0xF1...0xF3: length = 4; scalar = UInt32(first & 0x07)
        case 0xF4: length = 4; scalar = 4; upper = 0x8F
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            let (low, high) = offset == 1 ? (lower, upper) : (0x80, 0xBF)
            guard byte >= low, byte <= high else { return nil }
            scalar = scalar << 6 | UInt32(byte & 0x3F)
        }
        return (scalar, length)
    }
}
