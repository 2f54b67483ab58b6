/// Reads Java `.properties` files exactly as JDK 17's `Properties.load` does.
///
/// The JDK decodes the text (UTF-8 as `load(Reader)`, or ISO-8859-1 as
/// `load(InputStream)`) and works on UTF-16 `char`s. Every character the
/// rules look at (line ends, white space, separators, `#`, `!`, `\\`) is
/// ASCII, so this reader works on the UTF-8 bytes instead: the text is
/// checked as UTF-8 once (ISO-8859-1 is first turned into UTF-8), and a key
/// or value with no escape becomes a string straight from its bytes.
/// `\\uXXXX` escapes give UTF-16 code units, so two of them may form a
/// surrogate pair; lone surrogates, which a Java string can hold but a Swift
/// string cannot, become U+FFFD. A byte order mark is kept as part of the
/// first key, as the JDK does. Error columns count characters.
enum PropertiesParser {
    /// Parses `bytes`; every value is a `.string`.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)`` for
    ///   invalid UTF-8 (naming the byte offset) or a malformed `\u` escape
    ///   (naming its line and column).
    static func parse(_ bytes: [UInt8], encoding: PropertiesEncoding, file: String) throws
        -> [String: PreferenceValue]
    {
        let text: [UInt8]
        var lines = 0
        switch encoding {
        case .utf8:
            if let invalidAt = firstInvalidUTF8(bytes, lines: &lines) {
                let line = bytes.withUnsafeBufferPointer { position(of: invalidAt, in: $0).line }
                throw PreferencesError.legacyFormat(
                    file: file, line: line, column: nil,
                    reason: "invalid UTF-8 at byte offset \(invalidAt)")
            }
            text = bytes
        case .iso8859_1:
            text = latin1AsUTF8(bytes)
            lines = text.withUnsafeBufferPointer { lineCount($0) }
        }
        return try text.withUnsafeBufferPointer { units in
            var reader = LineReader(units: units)
            var result: [String: PreferenceValue] = [:]
            // About one entry a line: sized once rather than grown step by step.
            result.reserveCapacity(lines)
            // Continued lines are joined in one buffer, allocated once.
            let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(units.count, 1))
            defer { scratch.deallocate() }
            var line = LogicalLine(text: units, scratch: scratch)
            while reader.readLine(into: &line) {
                let split = split(line.units)
                let key = try unescape(
                    line, 0..<split.keyEnd, escaped: split.keyHasBackslash, text: units,
                    file: file)
                let value = try unescape(
                    line, split.valueStart..<line.count, escaped: nil, text: units,
                    file: file)
                result[key] = .string(value)
            }
            return result
        }
    }

    // MARK: - Logical lines

    /// One logical line. A line that is not continued is its bytes in the
    /// text; a continued one is joined in `scratch`, with where each run of
    /// it (one physical line's part) came from in the text, for error
    /// positions.
    struct LogicalLine {
        let text: UnsafeBufferPointer<UInt8>
        /// Room for the longest possible line, the whole text.
        let scratch: UnsafeMutableBufferPointer<UInt8>
        /// Where the line starts in the text, while it is one run.
        private var start = 0
        private(set) var count = 0
        private var joined = false
        /// For a joined line: (index in the line where the run starts, its
        /// offset in the text).
        private var runs: [(start: Int, origin: Int)] = []

        init(text: UnsafeBufferPointer<UInt8>, scratch: UnsafeMutableBufferPointer<UInt8>) {
            self.text = text
            self.scratch = scratch
        }

        var isEmpty: Bool { count == 0 }

        /// The line's bytes.
        var units: UnsafeBufferPointer<UInt8> {
            joined
                ? UnsafeBufferPointer(rebasing: scratch[0..<count])
                : UnsafeBufferPointer(rebasing: text[start..<start + count])
        }

        mutating func removeAll() {
            count = 0
            if joined {
                joined = false
                runs.removeAll(keepingCapacity: true)
            }
        }

        mutating func append(_ range: Range<Int>) {
            if !joined {
                if count == 0 {
                    start = range.lowerBound
                    count = range.count
                    return
                }
                // A second run: the line moves to `scratch`.
                joined = true
                runs.append((0, start))
                _ = scratch.update(fromContentsOf: text[start..<start + count])
            }
            runs.append((count, range.lowerBound))
            _ = UnsafeMutableBufferPointer(rebasing: scratch[count...]).update(
                fromContentsOf: text[range])
            count += range.count
        }

        mutating func removeLast() { count -= 1 }

        /// The offset in the text of the byte at `index`.
        func origin(of index: Int) -> Int {
            guard joined else { return start + index }
            let run = runs.last { $0.start <= index } ?? (0, 0)
            return run.origin + index - run.start
        }
    }

    /// JDK 17's `Properties.LineReader`: joins continued lines, drops
    /// comments and blank lines.
    struct LineReader {
        let units: UnsafeBufferPointer<UInt8>
        var offset = 0
        var skipLF = false

        init(units: UnsafeBufferPointer<UInt8>) { self.units = units }

        private static let space: UInt8 = 0x20
        private static let tab: UInt8 = 0x09
        private static let formFeed: UInt8 = 0x0C
        private static let newline: UInt8 = 0x0A
        private static let carriageReturn: UInt8 = 0x0D
        private static let backslash: UInt8 = 0x5C

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
                    if line.isEmpty { return false }
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
                if line.isEmpty && (char == 0x23 || char == 0x21) {
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
                    let end = ByteScan.lineEnd(in: units, from: offset)
                    line.append(position..<end)
                    var trailing = end
                    while trailing > position && units[trailing - 1] == Self.backslash {
                        trailing -= 1
                    }
                    precedingBackslash = (end - trailing) % 2 == 1
                    offset = end
                    continue
                }
                if line.isEmpty {
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

    /// Where the key ends and the value starts, as `Properties.load0` finds
    /// them, and whether the key holds a backslash.
    private static func split(_ units: UnsafeBufferPointer<UInt8>) -> (
        keyEnd: Int, valueStart: Int, keyHasBackslash: Bool
    ) {
        var keyEnd = 0
        var valueStart = units.count
        var hasSeparator = false
        var precedingBackslash = false
        var keyHasBackslash = false
        // Most keys have no backslash: the key ends at the first separator
        // or white space, found eight bytes at a time. From a backslash on,
        // byte by byte.
        keyEnd = ByteScan.firstKeyEnd(in: units)
        if keyEnd < units.count && units[keyEnd] != 0x5C {
            valueStart = keyEnd + 1
            hasSeparator = units[keyEnd] == 0x3D || units[keyEnd] == 0x3A
        }
        while keyEnd < units.count && valueStart == units.count {
            let char = units[keyEnd]
            if (char == 0x3D || char == 0x3A) && !precedingBackslash {
                valueStart = keyEnd + 1
                hasSeparator = true
                break
            } else if (char == 0x20 || char == 0x09 || char == 0x0C) && !precedingBackslash {
                valueStart = keyEnd + 1
                break
            }
            if char == 0x5C {
                precedingBackslash.toggle()
                keyHasBackslash = true
            } else {
                precedingBackslash = false
            }
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
        return (keyEnd, valueStart, keyHasBackslash)
    }

    /// `Properties.loadConvert`: decodes the escapes of one key or value,
    /// writing UTF-8 straight into the new string. `escaped` says whether
    /// the range holds a backslash, when that is known. A `\\uXXXX` escape
    /// gives one UTF-16 code unit, so two of them can form a surrogate pair;
    /// a lone surrogate becomes U+FFFD.
    private static func unescape(
        _ line: LogicalLine, _ range: Range<Int>, escaped: Bool?,
        text: UnsafeBufferPointer<UInt8>, file: String
    ) throws -> String {
        let units = line.units
        do {
            let slice = UnsafeBufferPointer(rebasing: units[range])
            // No escapes, the common case: the bytes are the string (the
            // text is known to be UTF-8).
            if !(escaped ?? ByteScan.contains(slice, 0x5C)) {
                return String(decoding: slice, as: UTF8.self)
            }
            // An escape's six bytes give at most three, a pair's twelve four,
            // and any other byte itself.
            return try String(unsafeUninitializedCapacity: range.count + 4) { bytes in
                var encoder = UTF8Writer(bytes: bytes)
                var index = range.lowerBound
                while index < range.upperBound {
                    // The bytes up to the next backslash, as they are.
                    let backslash = ByteScan.firstIndex(
                        of: 0x5C, in: units, from: index, to: range.upperBound)
                    if backslash > index {
                        encoder.writeBytes(UnsafeBufferPointer(rebasing: units[index..<backslash]))
                        index = backslash
                        if index == range.upperBound { break }
                    }
                    index += 1
                    // A backslash cannot end a key or value (the line reader and
                    // the split keep backslash runs even), but be safe: drop it.
                    guard index < range.upperBound else { break }
                    let escapeStart = index - 1
                    let char = units[index]
                    index += 1
                    switch char {
                    case 0x75:  // u
                        var value: UInt16 = 0
                        for _ in 0..<4 {
                            guard index < range.upperBound,
                                let digit = JSONText.hexValue(units[index])
                            else {
                                let shown = shownEscape(
                                    UnsafeBufferPointer(
                                        rebasing: units[escapeStart..<range.upperBound]))
                                let place = position(of: line.origin(of: escapeStart), in: text)
                                throw PreferencesError.legacyFormat(
                                    file: file, line: place.line, column: place.column,
                                    reason:
                                        "malformed \\uxxxx escape '\(shown)' (need four hex digits)"
                                )
                            }
                            value = value << 4 | UInt16(digit)
                            index += 1
                        }
                        encoder.write(value)
                    case 0x74: encoder.writeByte(0x09)  // t
                    case 0x72: encoder.writeByte(0x0D)  // r
                    case 0x6E: encoder.writeByte(0x0A)  // n
                    case 0x66: encoder.writeByte(0x0C)  // f
                    default: encoder.writeByte(char)
                    }
                }
                return encoder.finish()
            }
        }
    }

    /// The first six UTF-16 code units of `bytes` (a malformed escape and
    /// what follows it), as an error shows them; a pair cut in half shows
    /// as U+FFFD.
    private static func shownEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var shown = ""
        var units = 0
        var index = 0
        while units < 6 && index < bytes.count {
            guard let (scalar, length) = decodeUTF8(bytes, at: index) else { break }
            if scalar >= 0x10000 {
                if units == 5 {
                    shown.unicodeScalars.append("\u{FFFD}")
                    break
                }
                units += 2
            } else {
                units += 1
            }
            shown.unicodeScalars.append(Unicode.Scalar(scalar)!)
            index += length
        }
        return shown
    }

    /// UTF-8 bytes and UTF-16 code units in, UTF-8 out; lone surrogates as U+FFFD.
    struct UTF8Writer {
        let bytes: UnsafeMutableBufferPointer<UInt8>
        var count = 0
        var pendingHigh: UInt16?

        init(bytes: UnsafeMutableBufferPointer<UInt8>) { self.bytes = bytes }

        /// One byte of the text's own UTF-8, copied as it is.
        mutating func writeByte(_ byte: UInt8) {
            endLoneSurrogate()
            bytes[count] = byte
            count += 1
        }

        /// Bytes of the text's own UTF-8, copied as they are.
        mutating func writeBytes(_ run: UnsafeBufferPointer<UInt8>) {
            endLoneSurrogate()
            _ = UnsafeMutableBufferPointer(rebasing: bytes[count...]).update(fromContentsOf: run)
            count += run.count
        }

        /// One UTF-16 code unit of an escape.
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
            case 0xD800..<0xDC00: pendingHigh = unit
            case 0xDC00..<0xE000: put(0xFFFD)
            default: put(UInt32(unit))
            }
        }

        /// The byte count, after a final lone surrogate.
        mutating func finish() -> Int {
            endLoneSurrogate()
            return count
        }

        /// A high surrogate that no low one followed: U+FFFD.
        private mutating func endLoneSurrogate() {
            guard pendingHigh != nil else { return }
            pendingHigh = nil
            put(0xFFFD)
        }

        /// A scalar (never a surrogate) in UTF-8.
        private mutating func put(_ scalar: UInt32) {
            UTF8.encode(Unicode.Scalar(scalar)!) { byte in
                bytes[count] = byte
                count += 1
            }
        }
    }
}
