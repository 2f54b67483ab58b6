// The `.properties` reader as it was written first: it decodes the whole
// text into UTF-16 code units, as the JDK does, and reads those. The
// library's reader works on the UTF-8 bytes instead; the differential tests
// check that both give the same values and the same errors.

@testable import Preferences

/// Reads Java `.properties` files as JDK 17's `Properties.load` does, over UTF-16.
///
/// The text is first decoded (UTF-8 as `load(Reader)`, or ISO-8859-1 as
/// `load(InputStream)`) into UTF-16 code units, because the JDK works on
/// `char`s: `\uXXXX` escapes may then form surrogate pairs across two escapes.
/// Lone surrogates, which a Java string can hold but a Swift string cannot,
/// become U+FFFD. A byte order mark is kept as part of the first key, as the
/// JDK does.
enum ReferencePropertiesParser {
    /// Parses `bytes`; every value is a `.string`.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)`` for
    ///   invalid UTF-8 (naming the byte offset) or a malformed `\u` escape
    ///   (naming its line and column).
    static func parse(_ bytes: [UInt8], encoding: PropertiesEncoding, file: String) throws
        -> [String: PreferenceValue]
    {
        let text = try decode(bytes, encoding: encoding, file: file)
        return try text.units.withUnsafeBufferPointer { units in
            var reader = LineReader(units: units)
            var result: [String: PreferenceValue] = [:]
            // About one entry a line: sized once rather than grown step by step.
            result.reserveCapacity(units.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) })
            // The line's buffers are reused: a large file costs few allocations.
            var line = LogicalLine()
            while reader.readLine(into: &line) {
                let (keyEnd, valueStart) = split(line.units)
                let key = try unescape(line, 0..<keyEnd, text: text, file: file)
                let value = try unescape(
                    line, valueStart..<line.units.count, text: text, file: file)
                result[key] = .string(value)
            }
            return result
        }
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
        // Storage of capacity 0 is the runtime's one shared empty array,
        // which `unsafeUninitializedCapacity` would write its count into
        // (a race that ThreadSanitizer reports), so an empty file is
        // decoded apart.
        if bytes.isEmpty { return DecodedText(units: []) }
        // A byte gives at most one unit (four bytes, two), so the units are
        // written straight into storage of the bytes' count.
        var invalidAt: Int?
        let units = [UInt16](unsafeUninitializedCapacity: bytes.count) { units, written in
            bytes.withUnsafeBufferPointer { bytes in
                switch encoding {
                case .iso8859_1:
                    for (index, byte) in bytes.enumerated() { units[index] = UInt16(byte) }
                    written = bytes.count
                case .utf8:
                    var index = 0
                    while index < bytes.count {
                        let first = bytes[index]
                        if first < 0x80 {
                            units[written] = UInt16(first)
                            written += 1
                            index += 1
                            continue
                        }
                        guard let (scalar, length) = decodeUTF8(bytes, at: index) else {
                            invalidAt = index
                            return
                        }
                        if scalar >= 0x10000 {
                            let value = scalar - 0x10000
                            units[written] = UInt16(0xD800 + (value >> 10))
                            units[written + 1] = UInt16(0xDC00 + (value & 0x3FF))
                            written += 2
                        } else {
                            units[written] = UInt16(scalar)
                            written += 1
                        }
                        index += length
                    }
                }
            }
        }
        let text = DecodedText(units: units)
        if let invalidAt {
            // The units decoded so far end where the bad byte is.
            throw PreferencesError.legacyFormat(
                file: file, line: text.position(of: units.count).line, column: nil,
                reason: "invalid UTF-8 at byte offset \(invalidAt)")
        }
        return text
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

    // MARK: - Logical lines

    /// One logical line: its code units, and where each run of them (one
    /// physical line's part) came from in the text, for error positions.
    struct LogicalLine {
        var units: [UInt16] = []
        /// (index in `units` where the run starts, its offset in the text).
        var runs: [(start: Int, origin: Int)] = []

        mutating func removeAll() {
            units.removeAll(keepingCapacity: true)
            runs.removeAll(keepingCapacity: true)
        }

        mutating func append(_ text: UnsafeBufferPointer<UInt16>, _ range: Range<Int>) {
            runs.append((units.count, range.lowerBound))
            units.append(contentsOf: UnsafeBufferPointer(rebasing: text[range]))
        }

        mutating func removeLast() { units.removeLast() }

        /// The offset in the text of the unit at `index`.
        func origin(of index: Int) -> Int {
            let run = runs.last { $0.start <= index } ?? (0, 0)
            return run.origin + index - run.start
        }
    }

    /// JDK 17's `Properties.LineReader`: joins continued lines, drops
    /// comments and blank lines.
    struct LineReader {
        let units: UnsafeBufferPointer<UInt16>
        var offset = 0
        var skipLF = false

        init(units: UnsafeBufferPointer<UInt16>) { self.units = units }

        private static let space: UInt16 = 0x20
        private static let tab: UInt16 = 0x09
        private static let formFeed: UInt16 = 0x0C
        private static let newline: UInt16 = 0x0A
        private static let carriageReturn: UInt16 = 0x0D
        private static let backslash: UInt16 = 0x5C

        /// Reads the next logical line into `line` (its buffers are reused);
        /// false at the end of the text.
        mutating func readLine(into line: inout LogicalLine) -> Bool {
            line.removeAll()
            var skipWhiteSpace = true
            var appendedLineBegin = false
            var precedingBackslash = false
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
                    // The rest of the physical line joins the logical line in
                    // one piece. A run always starts with no backslash before
                    // it, so whether its end is escaped depends on the run's
                    // own trailing backslashes.
                    var end = offset
                    while end < units.count && units[end] != Self.newline
                        && units[end] != Self.carriageReturn
                    {
                        end += 1
                    }
                    line.append(units, position..<end)
                    var trailing = end
                    while trailing > position && units[trailing - 1] == Self.backslash {
                        trailing -= 1
                    }
                    precedingBackslash = (end - trailing) % 2 == 1
                    offset = end
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

    /// `Properties.loadConvert`: decodes the escapes of one key or value,
    /// writing UTF-8 straight into the new string. A `\uXXXX` escape gives
    /// one UTF-16 code unit, so two of them (or an escape and a literal) can
    /// form a surrogate pair; a lone surrogate becomes U+FFFD.
    private static func unescape(
        _ line: LogicalLine, _ range: Range<Int>, text: DecodedText, file: String
    ) throws -> String {
        try line.units.withUnsafeBufferPointer { units in
            // Plain ASCII without escapes, the common case, is copied as is.
            if !units[range].contains(where: { $0 >= 0x80 || $0 == 0x5C }) {
                return String(unsafeUninitializedCapacity: range.count) { bytes in
                    for (position, index) in range.enumerated() {
                        bytes[position] = UInt8(truncatingIfNeeded: units[index])
                    }
                    return range.count
                }
            }
            // Each unit gives at most three bytes (a pair, two units, four).
            return try String(unsafeUninitializedCapacity: range.count * 3) { bytes in
                var encoder = UTF8Writer(bytes: bytes)
                var index = range.lowerBound
                while index < range.upperBound {
                    var char = units[index]
                    index += 1
                    guard char == 0x5C else {
                        encoder.write(char)
                        continue
                    }
                    // A backslash cannot end a key or value (the line reader and
                    // the split keep backslash runs even), but be safe: drop it.
                    guard index < range.upperBound else { break }
                    let escapeStart = index - 1
                    char = units[index]
                    index += 1
                    switch char {
                    case 0x75:  // u
                        var value: UInt16 = 0
                        for _ in 0..<4 {
                            guard index < range.upperBound, let digit = hexValue(units[index])
                            else {
                                let shown = String(
                                    decoding: units[
                                        escapeStart..<min(escapeStart + 6, range.upperBound)],
                                    as: UTF16.self)
                                let place = text.position(of: line.origin(of: escapeStart))
                                throw PreferencesError.legacyFormat(
                                    file: file, line: place.line, column: place.column,
                                    reason:
                                        "malformed \\uxxxx escape '\(shown)' (need four hex digits)"
                                )
                            }
                            value = value << 4 | digit
                            index += 1
                        }
                        encoder.write(value)
                    case 0x74: encoder.write(0x09)  // t
                    case 0x72: encoder.write(0x0D)  // r
                    case 0x6E: encoder.write(0x0A)  // n
                    case 0x66: encoder.write(0x0C)  // f
                    default: encoder.write(char)
                    }
                }
                return encoder.finish()
            }
        }
    }

    /// UTF-16 code units in, UTF-8 out; lone surrogates as U+FFFD.
    struct UTF8Writer {
        let bytes: UnsafeMutableBufferPointer<UInt8>
        var count = 0
        var pendingHigh: UInt16?

        init(bytes: UnsafeMutableBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func write(_ unit: UInt16) {
            if let high = pendingHigh {
                pendingHigh = nil
                if (0xDC00..<0xE000).contains(unit) {
                    put(0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(unit) - 0xDC00))
                    return
                }
                put(0xFFFD)
            }
            switch unit {
            case 0..<0x80:
                bytes[count] = UInt8(unit)
                count += 1
            case 0xD800..<0xDC00: pendingHigh = unit
            case 0xDC00..<0xE000: put(0xFFFD)
            default: put(UInt32(unit))
            }
        }

        /// The byte count, after a final lone surrogate.
        mutating func finish() -> Int {
            if pendingHigh != nil {
                pendingHigh = nil
                put(0xFFFD)
            }
            return count
        }

        private mutating func put(_ scalar: UInt32) {
            switch scalar {
            case 0..<0x80:
                bytes[count] = UInt8(scalar)
                count += 1
            case 0x80..<0x800:
                bytes[count] = UInt8(0xC0 | scalar >> 6)
                bytes[count + 1] = UInt8(0x80 | scalar & 0x3F)
                count += 2
            case 0x800..<0x10000:
                bytes[count] = UInt8(0xE0 | scalar >> 12)
                bytes[count + 1] = UInt8(0x80 | (scalar >> 6) & 0x3F)
                bytes[count + 2] = UInt8(0x80 | scalar & 0x3F)
                count += 3
            default:
                bytes[count] = UInt8(0xF0 | scalar >> 18)
                bytes[count + 1] = UInt8(0x80 | (scalar >> 12) & 0x3F)
                bytes[count + 2] = UInt8(0x80 | (scalar >> 6) & 0x3F)
                bytes[count + 3] = UInt8(0x80 | scalar & 0x3F)
                count += 4
            }
        }
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
