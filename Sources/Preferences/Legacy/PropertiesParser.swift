/// Reads Java `.properties` files exactly as JDK 17's `Properties.load` does.
///
/// The text is first decoded (UTF-8 as `load(Reader)`, or ISO-8859-1 as
/// `load(InputStream)`) into UTF-16 code units, because the JDK works on
/// `char`s: `\uXXXX` escapes may then form surrogate pairs across two escapes.
/// Lone surrogates, which a Java string can hold but a Swift string cannot,
/// become U+FFFD. A byte order mark is kept as part of the first key, as the
/// JDK does.
enum PropertiesParser {
    /// Parses `bytes`; every value is a `.string`.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)`` for
    ///   invalid UTF-8 (naming the byte offset) or a malformed `\u` escape
    ///   (naming its line and column).
    static func parse(_ bytes: [UInt8], encoding: PropertiesEncoding, file: String) throws
        -> [String: PreferenceValue]
    {
        let text = try decode(bytes, encoding: encoding, file: file)
        var reader = LineReader(text: text)
        var result: [String: PreferenceValue] = [:]
        // Buffers reused from line to line: a large file costs few allocations.
        var line = LogicalLine()
        var scratch = Scratch()
        while reader.readLine(into: &line) {
            let (keyEnd, valueStart) = split(line.units)
            let key = try unescape(line, 0..<keyEnd, text: text, file: file, scratch: &scratch)
            let value = try unescape(
                line, valueStart..<line.units.count, text: text, file: file, scratch: &scratch)
            result[key] = .string(value)
        }
        return result
    }

    // MARK: - Decoding

    /// The decoded file as UTF-16 code units. Lines and columns are worked
    /// out from an offset only when an error needs them.
    struct DecodedText {
        var units: [UInt16] = []

        /// The 1-based line and column (in characters) of the unit at `offset`.
        func position(of offset: Int) -> (line: Int, column: Int) {
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
                } else if !(0xDC00..<0xE000).contains(unit) || index == 0
                    || !(0xD800..<0xDC00).contains(units[index - 1])
                {
                    column += 1
                }
                previousWasCR = unit == 0x0D
                index += 1
            }
            return (line, column)
        }
    }

    private static func decode(_ bytes: [UInt8], encoding: PropertiesEncoding, file: String)
        throws -> DecodedText
    {
        var text = DecodedText()
        text.units.reserveCapacity(bytes.count)
        switch encoding {
        case .iso8859_1:
            for byte in bytes { text.units.append(UInt16(byte)) }
        case .utf8:
            var index = 0
            while index < bytes.count {
                let first = bytes[index]
                if first < 0x80 {
                    text.units.append(UInt16(first))
                    index += 1
                    continue
                }
                guard let (scalar, length) = decodeUTF8(bytes, at: index) else {
                    throw PreferencesError.legacyFormat(
                        file: file, line: text.position(of: text.units.count).line, column: nil,
                        reason: "invalid UTF-8 at byte offset \(index)")
                }
                if scalar >= 0x10000 {
                    let value = scalar - 0x10000
                    text.units.append(UInt16(0xD800 + (value >> 10)))
                    text.units.append(UInt16(0xDC00 + (value & 0x3FF)))
                } else {
                    text.units.append(UInt16(scalar))
                }
                index += length
            }
        }
        return text
    }

    /// Decodes one well-formed UTF-8 sequence (no overlong forms, surrogates
    /// or values beyond U+10FFFF), or returns nil.
    static func decodeUTF8(_ bytes: [UInt8], at index: Int) -> (UInt32, Int)? {
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

    // MARK: - Logical lines

    /// One logical line: its code units, each with its offset in the text
    /// (for error positions).
    struct LogicalLine {
        var units: [UInt16] = []
        var origins: [Int32] = []
    }

    /// JDK 17's `Properties.LineReader`: joins continued lines, drops
    /// comments and blank lines.
    struct LineReader {
        let text: DecodedText
        var offset = 0
        var skipLF = false

        init(text: DecodedText) { self.text = text }

        private static let space: UInt16 = 0x20
        private static let tab: UInt16 = 0x09
        private static let formFeed: UInt16 = 0x0C
        private static let newline: UInt16 = 0x0A
        private static let carriageReturn: UInt16 = 0x0D
        private static let backslash: UInt16 = 0x5C

        /// Reads the next logical line into `line` (its buffers are reused);
        /// false at the end of the text.
        mutating func readLine(into line: inout LogicalLine) -> Bool {
            line.units.removeAll(keepingCapacity: true)
            line.origins.removeAll(keepingCapacity: true)
            var skipWhiteSpace = true
            var appendedLineBegin = false
            var precedingBackslash = false
            let units = text.units
            while true {
                guard offset < units.count else {
                    // End of input: the logical line ends; a dangling
                    // continuation backslash is dropped.
                    if line.units.isEmpty { return false }
                    if precedingBackslash { line.removeLast() }
                    return true
                }
                let char = units[offset]
                let position = offset
                offset += 1
                if skipLF {
                    skipLF = false
                    if char == Self.newline { continue }
                }
                if skipWhiteSpace {
                    if char == Self.space || char == Self.tab || char == Self.formFeed { continue }
                    if !appendedLineBegin && (char == Self.carriageReturn || char == Self.newline) {
                        continue
                    }
                    skipWhiteSpace = false
                    appendedLineBegin = false
                }
                // JDK 9+: a comment starts wherever the logical line is still
                // empty, even on a line reached by continuation.
                if line.units.isEmpty && (char == 0x23 || char == 0x21) {
                    while offset < units.count {
                        let next = units[offset]
                        offset += 1
                        if next == Self.carriageReturn || next == Self.newline { break }
                    }
                    skipWhiteSpace = true
                    continue
                }
                if char != Self.newline && char != Self.carriageReturn {
                    line.units.append(char)
                    line.origins.append(Int32(truncatingIfNeeded: position))
                    precedingBackslash = char == Self.backslash ? !precedingBackslash : false
                    continue
                }
                if line.units.isEmpty {
                    skipWhiteSpace = true
                    continue
                }
                if offset >= units.count {
                    if precedingBackslash { line.removeLast() }
                    return true
                }
                guard precedingBackslash else { return true }
                line.removeLast()
                skipWhiteSpace = true
                appendedLineBegin = true
                precedingBackslash = false
                if char == Self.carriageReturn { skipLF = true }
            }
        }
    }

    // MARK: - Key and value

    /// Where the key ends and the value starts, as `Properties.load0` finds them.
    private static func split(_ units: [UInt16]) -> (keyEnd: Int, valueStart: Int) {
        var keyEnd = 0
        var valueStart = units.count
        var hasSeparator = false
        var precedingBackslash = false
        while keyEnd < units.count {
            let char = units[keyEnd]
            if (char == 0x3D || char == 0x3A) && !precedingBackslash {
                valueStart = keyEnd + 1
                hasSeparator = true
                break
            } else if (char == 0x20 || char == 0x09 || char == 0x0C) && !precedingBackslash {
                valueStart = keyEnd + 1
                break
            }
            precedingBackslash = char == 0x5C ? !precedingBackslash : false
            keyEnd += 1
        }
        while valueStart < units.count {
            let char = units[valueStart]
            if char != 0x20 && char != 0x09 && char != 0x0C {
                if !hasSeparator && (char == 0x3D || char == 0x3A) {
                    hasSeparator = true
                } else {
                    break
                }
            }
            valueStart += 1
        }
        return (keyEnd, valueStart)
    }

    /// `Properties.loadConvert`: decodes the escapes of one key or value.
    /// Buffers for ``unescape(_:_:text:file:scratch:)``, reused between calls.
    struct Scratch {
        var units: [UInt16] = []
        var bytes: [UInt8] = []
    }

    private static func unescape(
        _ line: LogicalLine, _ range: Range<Int>, text: DecodedText, file: String,
        scratch: inout Scratch
    ) throws -> String {
        scratch.units.removeAll(keepingCapacity: true)
        // Plain ASCII without escapes, the common case, goes straight to a string.
        var plain = true
        for index in range where line.units[index] >= 0x80 || line.units[index] == 0x5C {
            plain = false
            break
        }
        if plain {
            scratch.bytes.removeAll(keepingCapacity: true)
            for index in range {
                scratch.bytes.append(UInt8(truncatingIfNeeded: line.units[index]))
            }
            return String(decoding: scratch.bytes, as: UTF8.self)
        }
        var out = scratch.units
        scratch.units = []
        defer { scratch.units = out }
        var index = range.lowerBound
        while index < range.upperBound {
            var char = line.units[index]
            index += 1
            guard char == 0x5C else {
                out.append(char)
                continue
            }
            // A backslash cannot end a key or value (the line reader and the
            // split keep backslash runs even), but be safe: drop it.
            guard index < range.upperBound else { break }
            let escapeStart = index - 1
            char = line.units[index]
            index += 1
            switch char {
            case 0x75:  // u
                var value: UInt16 = 0
                for _ in 0..<4 {
                    guard index < range.upperBound, let digit = hexValue(line.units[index]) else {
                        let shown = String(
                            decoding: line.units[
                                escapeStart..<min(escapeStart + 6, range.upperBound)],
                            as: UTF16.self)
                        let place = text.position(of: Int(line.origins[escapeStart]))
                        throw PreferencesError.legacyFormat(
                            file: file, line: place.line, column: place.column,
                            reason: "malformed \\uxxxx escape '\(shown)' (need four hex digits)")
                    }
                    value = value << 4 | digit
                    index += 1
                }
                out.append(value)
            case 0x74: out.append(0x09)  // t
            case 0x72: out.append(0x0D)  // r
            case 0x6E: out.append(0x0A)  // n
            case 0x66: out.append(0x0C)  // f
            default: out.append(char)
            }
        }
        return string(fromUTF16: out, buffer: &scratch.bytes)
    }

    /// A string from UTF-16 code units, lone surrogates as U+FFFD, going
    /// through UTF-8 (the standard library's fast path).
    static func string(fromUTF16 units: [UInt16], buffer bytes: inout [UInt8]) -> String {
        bytes.removeAll(keepingCapacity: true)
        var index = 0
        while index < units.count {
            let unit = units[index]
            index += 1
            var scalar = UInt32(unit)
            if unit < 0x80 {
                bytes.append(UInt8(unit))
                continue
            }
            if (0xD800..<0xDC00).contains(unit), index < units.count,
                (0xDC00..<0xE000).contains(units[index])
            {
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (UInt32(units[index]) - 0xDC00)
                index += 1
            } else if (0xD800..<0xE000).contains(unit) {
                scalar = 0xFFFD
            }
            switch scalar {
            case 0..<0x800:
                bytes.append(UInt8(0xC0 | scalar >> 6))
                bytes.append(UInt8(0x80 | scalar & 0x3F))
            case 0x800..<0x10000:
                bytes.append(UInt8(0xE0 | scalar >> 12))
                bytes.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
                bytes.append(UInt8(0x80 | scalar & 0x3F))
            default:
                bytes.append(UInt8(0xF0 | scalar >> 18))
                bytes.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
                bytes.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
                bytes.append(UInt8(0x80 | scalar & 0x3F))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ unit: UInt16) -> UInt16? {
        switch unit {
        case 0x30...0x39: unit - 0x30
        case 0x41...0x46: unit - 0x41 + 10
        case 0x61...0x66: unit - 0x61 + 10
        default: nil
        }
    }
}

extension PropertiesParser.LogicalLine {
    fileprivate mutating func removeLast() {
        units.removeLast()
        origins.removeLast()
    }
}
