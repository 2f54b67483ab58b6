/// Writing JSON: the file layout (two-space indentation, `" : "`
/// separators, keys sorted by their UTF-8 bytes) and compact text.
extension JSONText {
    /// Writes `value` as JSON; `pretty` gives the file layout of <doc:FileFormat>
    /// (without the final newline).
    static func encode(_ value: PreferenceValue, pretty: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(value, into: &out, pretty: pretty, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    static func encodeBytes(_ value: PreferenceValue, pretty: Bool) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(value, into: &out, pretty: pretty, indent: 0)
        return out
    }

    static func write(
        _ value: PreferenceValue, into out: inout [UInt8], pretty: Bool, indent: Int
    ) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): writeInteger(number, into: &out)
        case .double(let number): writeDouble(number, into: &out)
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            if items.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(into: &out, indent: indent + 1) }
                write(item, into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(into: &out, indent: indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            if fields.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, field) in sortedByKey(fields) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                if pretty { newline(into: &out, indent: indent + 1) }
                writeString(key, into: &out)
                out.append(contentsOf: (pretty ? " : " : ":").utf8)
                write(field, into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(into: &out, indent: indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Whether `first` comes before `second` in the order of their UTF-8 bytes.
    static func precedesByBytes(_ first: String, _ second: String) -> Bool {
        first.utf8.lexicographicallyPrecedes(second.utf8)
    }

    /// The members in the order of their keys' UTF-8 bytes (which is the
    /// order of their Unicode scalars). Not `String`'s `<`: it compares
    /// normalized forms, and keys that mix spellings of one character (é as
    /// one scalar, and as e with a combining accent) have no consistent order
    /// under it, so the written order would follow the dictionary's layout
    /// and differ from process to process.
    static func sortedByKey(_ fields: [String: PreferenceValue]) -> [(
        key: String, value: PreferenceValue
    )] {
        let entries = Array(fields)
        // A few members (a change record, a small object): a plain sort,
        // without the buffers of `ByteKeySort`.
        if entries.count <= 8 { return entries.sorted { precedesByBytes($0.key, $1.key) } }
        var keys = ByteKeySort(capacity: entries.count)
        for entry in entries { keys.append(entry.key) }
        return keys.sortedOrder().map { entries[$0] }
    }

    static func newline(into out: inout [UInt8], indent: Int) {
        out.append(UInt8(ascii: "\n"))
        for _ in 0..<indent { out.append(contentsOf: [0x20, 0x20]) }
    }

    /// Decimal digits straight into the output, without a `String` between.
    static func writeInteger(_ number: Int64, into out: inout [UInt8]) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        // The magnitude as unsigned, so that Int64.min has one.
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes ≥ 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            out.append(contentsOf: buffer[(24 - count)...])
        }
    }

    private static func writeDouble(_ number: Double, into out: inout [UInt8]) {
        // JSON has no non-finite numbers; the file format spells them as strings.
        if number.isNaN {
            writeString("NaN", into: &out)
        } else if number.isInfinite {
            writeString(number > 0 ? "Infinity" : "-Infinity", into: &out)
        } else {
            // Swift's shortest round-trip form ("14.0", "1e-05", "1e+20") is valid JSON.
            out.append(contentsOf: number.description.utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func writeString(_ text: String, into out: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(bytes: $0, into: &out) }
    }

    /// A string given by its UTF-8 bytes, quoted and escaped.
    static func writeString(bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escaping: copied whole.
        if !needsEscaping(bytes) {
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any byte needs an escape in a JSON string: a control
    /// character, `"`, `\\` or DEL. Eight bytes are tested at a time.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Whether some byte is below 0x20, or is `"`, `\\` or DEL, one branch
        // a word: `(x - 0x01…) & ~x & 0x80…` is non-zero when some byte of
        // `x` is zero (exact as to whether, not which), and with 0x20… when
        // some byte is below 0x20. XOR with an ASCII byte keeps each byte's
        // high bit, so `~word` serves for all four.
        func flagged(_ word: UInt64) -> Bool {
            let below20 = word &- ones &* 0x20
            let quote = (word ^ (ones &* 0x22)) &- ones
            let backslash = (word ^ (ones &* 0x5C)) &- ones
            let delete = (word ^ (ones &* 0x7F)) &- ones
            return (below20 | quote | backslash | delete) & ~word & (ones &* 0x80) != 0
        }
        var offset = 0
        while offset + 8 <= raw.count {
            if flagged(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { return true }
            offset += 8
        }
        // The last few bytes: the last eight again when there are eight.
        if offset < raw.count && raw.count >= 8 {
            return flagged(raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self))
        }
        while offset < raw.count {
            let byte = raw[offset]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return true }
            offset += 1
        }
        return false
    }
}
