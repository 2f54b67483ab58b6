/// The JSON reader and writer behind the file format (SPEC §5).
///
/// It is written here rather than taken from Foundation so that integers and
/// doubles stay apart, nesting depth is limited while parsing (not after), a
/// syntax error names its line and column, and the output is byte-for-byte
/// stable: two-space indentation, `" : "` separators, keys sorted.
enum JSONText {
    /// Parses `bytes` as one JSON value.
    ///
    /// - Parameters:
    ///   - source: the file name used in error messages.
    ///   - maxDepth: arrays and objects nested deeper than this are an error.
    static func parse(_ bytes: [UInt8], source: String, maxDepth: Int = 512) throws
        -> PreferenceValue
    {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, source: source, maxDepth: maxDepth)
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.index != buffer.count {
                throw parser.error("unexpected text after the end of the JSON value")
            }
            return value
        }
    }

    /// Parses `bytes` as one JSON value, as ``parse(_:source:maxDepth:)``
    /// does, except that when the top-level object's member `deferred` is
    /// an object, its members' values are checked (with the same errors at
    /// the same places) but not built: the result has `null` there, and
    /// beside it the member's keys with the byte ranges of their values, in
    /// the order of the text (the last object wins when the member repeats).
    static func parse(
        _ bytes: [UInt8], source: String, maxDepth: Int, deferring deferred: String
    ) throws -> (value: PreferenceValue, deferred: [(key: String, range: Range<Int>)]?) {
        let parsed = try parseDocument(
            bytes, source: source, maxDepth: maxDepth, deferring: deferred, keyOrderOf: nil)
        return (parsed.value, parsed.deferred?.map { ($0.key(in: bytes), $0.value) })
    }

    /// A member of the object whose values are checked but not built: where
    /// its key and its value are in the text.
    struct DeferredMember {
        /// The key's string literal, quotes included.
        var quotedKey: Range<Int>
        /// Whether the key is its text between the quotes as it stands (no
        /// escapes), so that it is made straight from those bytes.
        var keyIsLiteral: Bool
        /// The member's value.
        var value: Range<Int>

        /// The key's UTF-8, between the quotes (its value when ``keyIsLiteral``).
        var keyText: Range<Int> { quotedKey.lowerBound + 1..<quotedKey.upperBound - 1 }

        /// The key, from the text it was read from (and checked in).
        func key(in bytes: [UInt8]) -> String {
            if keyIsLiteral { return String(decoding: bytes[keyText], as: UTF8.self) }
            let parsed = try? JSONText.parse(Array(bytes[quotedKey]), source: "", maxDepth: 1)
            guard case .string(let key)? = parsed else {
                preconditionFailure("a deferred member's key was checked when it was read")
            }
            return key
        }
    }

    /// A top-level object read by
    /// ``parseDocument(_:source:maxDepth:deferring:keyOrderOf:)``.
    struct Document {
        var value: PreferenceValue
        /// The deferred member's members, in the order of the text.
        var deferred: [DeferredMember]?
        /// Where the keys of the member named by `keyOrderOf` are, as string
        /// literals (quotes included), in the order of the text, duplicates
        /// included; nil when that member is no object.
        var keyOrder: [Range<Int>]?
    }

    /// ``parse(_:source:maxDepth:deferring:)``, which also gives where the
    /// keys of the top-level member `ordered` (when it is an object) are, in
    /// the order the text has them, which its dictionary forgets. The store
    /// reads `values` so: a file it wrote lists `modified` in the same order,
    /// and comparing the two lists' bytes pairs each key with its record
    /// without hashing the keys again (``ChangeLog``).
    static func parseDocument(
        _ bytes: [UInt8], source: String, maxDepth: Int, deferring deferred: String,
        keyOrderOf ordered: String?
    ) throws -> Document {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, source: source, maxDepth: maxDepth)
            parser.deferredName = deferred
            parser.orderedName = ordered
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.index != buffer.count {
                throw parser.error("unexpected text after the end of the JSON value")
            }
            return Document(
                value: value, deferred: parser.deferredMembers, keyOrder: parser.orderedKeys)
        }
    }

    /// Whether the bytes at `first` equal those at `second` (of `first`'s
    /// length); both lie inside `bytes`. Eight bytes at a time, then the rest.
    static func sameBytes(
        _ bytes: UnsafeRawBufferPointer, _ first: Range<Int>, _ second: Range<Int>
    ) -> Bool {
        guard first.count == second.count else { return false }
        var offset = 0
        while offset + 8 <= first.count {
            if bytes.loadUnaligned(fromByteOffset: first.lowerBound + offset, as: UInt64.self)
                != bytes.loadUnaligned(fromByteOffset: second.lowerBound + offset, as: UInt64.self)
            {
                return false
            }
            offset += 8
        }
        while offset < first.count {
            if bytes[first.lowerBound + offset] != bytes[second.lowerBound + offset] {
                return false
            }
            offset += 1
        }
        return true
    }

    /// Writes `value` as JSON; `pretty` gives the file layout of SPEC §5
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

    // MARK: - Writing

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

    // MARK: - Reading

    /// The members of the object at `range` of `bytes`, which was checked
    /// as JSON already, each with its value, in the order of the text
    /// (duplicates kept); nil when the value there is no object. For a
    /// reader that wants a few known members and no dictionary of them.
    static func members(ofObjectAt range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>)
        -> [(key: String, value: PreferenceValue)]?
    {
        guard range.lowerBound < range.upperBound, bytes[range.lowerBound] == UInt8(ascii: "{")
        else { return nil }
        var parser = Parser(
            bytes: UnsafeBufferPointer(rebasing: bytes[range]), source: "", maxDepth: .max)
        return try? parser.parseMembers()
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let source: String
        let maxDepth: Int
        var index = 0
        /// Members of the objects being parsed, innermost last.
        var members: [(String, PreferenceValue)] = []
        /// The top-level member whose object is checked but not built.
        var deferredName: String?
        /// That member's keys and value ranges, once it is read.
        var deferredMembers: [DeferredMember]?
        /// The top-level member whose keys are kept in the order of the text.
        var orderedName: String?
        /// Set just before that member's object is parsed; the object clears it.
        var capturesNextObject = false
        /// That member's keys' literals, once it is read (nil when it is no object).
        var orderedKeys: [Range<Int>]?

        init(bytes: UnsafeBufferPointer<UInt8>, source: String, maxDepth: Int) {
            self.bytes = bytes
            self.source = source
            self.maxDepth = maxDepth
        }

        func error(_ reason: String, at offset: Int? = nil) -> PreferencesError {
            let offset = min(offset ?? index, bytes.count)
            var line = 1
            var column = 1
            for byte in bytes[0..<offset] {
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return .corrupted(file: source, reason: "line \(line), column \(column): \(reason)")
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws -> PreferenceValue {
            guard index < bytes.count else { throw error("unexpected end of text") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw error("unexpected character \(describe(bytes[index]))")
            }
        }

        private func describe(_ byte: UInt8) -> String {
            byte >= 0x21 && byte < 0x7F
                ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        }

        private mutating func literal(_ word: StaticString, _ value: PreferenceValue) throws
            -> PreferenceValue
        {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw error("unexpected end of text") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw error("invalid literal, expected '\(word)'")
            }
            index += count
            return value
        }

        private mutating func parseObject(depth: Int) throws -> PreferenceValue {
            if depth > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
            // Only this object, not the ones inside it, keeps its key order.
            let keepsOrder = capturesNextObject
            capturesNextObject = false
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                if keepsOrder { orderedKeys = [] }
                return .object([:])
            }
            // Members are gathered first and the dictionary built at its final
            // size, so a large object is never rehashed while it grows. Nested
            // objects share the one buffer, each above its parent's members.
            let first = members.count
            defer { members.removeSubrange(first...) }
            var keyLiterals: [Range<Int>] = []
            while true {
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of text in object") }
                guard bytes[index] == UInt8(ascii: "\"") else {
                    throw error("expected a string key, found \(describe(bytes[index]))")
                }
                let keyStart = index
                let key = try parseString()
                if keepsOrder { keyLiterals.append(keyStart..<index) }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw error("expected ':' after key \"\(key)\"")
                }
                index += 1
                skipWhitespace()
                if depth == 1, let deferredName, key == deferredName {
                    if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                        deferredMembers = try skimObject(depth: depth + 1)
                        members.append((key, .null))
                    } else {
                        deferredMembers = nil
                        members.append((key, try parseValue(depth: depth)))
                    }
                } else {
                    if depth == 1, let orderedName, key == orderedName {
                        // The last member of the name counts, as in the dictionary.
                        orderedKeys = nil
                        capturesNextObject =
                            index < bytes.count && bytes[index] == UInt8(ascii: "{")
                    }
                    let value = try parseValue(depth: depth)
                    members.append((key, value))
                }
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of text in object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    if keepsOrder { orderedKeys = keyLiterals }
                    var fields = [String: PreferenceValue](minimumCapacity: members.count - first)
                    // Last duplicate wins, as in most JSON readers.
                    for position in first..<members.count {
                        fields[members[position].0] = members[position].1
                    }
                    return .object(fields)
                } else {
                    throw error("expected ',' or '}' in object, found \(describe(bytes[index]))")
                }
            }
        }

        /// The members of the object at `index`, in the order of the text.
        mutating func parseMembers() throws -> [(key: String, value: PreferenceValue)] {
            index += 1
            var found: [(key: String, value: PreferenceValue)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return found
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw error("expected a string key")
                }
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw error("expected ':' after key \"\(key)\"")
                }
                index += 1
                skipWhitespace()
                found.append((key, try parseValue(depth: 1)))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of text in object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return found
                } else {
                    throw error("expected ',' or '}' in object")
                }
            }
        }

        /// The members of the object at `index`: each key, and the range of
        /// its value, checked by ``skipValue(depth:)``.
        private mutating func skimObject(depth: Int) throws -> [DeferredMember] {
            if depth > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
            index += 1
            var found: [DeferredMember] = []
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
                    DeferredMember(
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
        private func plainRun(from start: Int) -> (end: Int, ascii: Bool) {
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

        private mutating func parseArray(depth: Int) throws -> PreferenceValue {
            if depth > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
            index += 1
            var items = [PreferenceValue]()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipWhitespace()
                items.append(try parseValue(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of text in array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                } else {
                    throw error("expected ',' or ']' in array, found \(describe(bytes[index]))")
                }
            }
        }

        private mutating func parseString() throws -> String {
            let start = index
            index += 1
            // Fast path: no escapes.
            let (scan, ascii) = plainRun(from: index)
            if scan < bytes.count, bytes[scan] == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[index..<scan])
                // ASCII needs no validation.
                let text =
                    ascii
                    ? String(decoding: slice, as: UTF8.self)
                    : String(validating: slice, as: UTF8.self)
                guard let text else { throw error("invalid UTF-8 in string", at: start) }
                index = scan + 1
                return text
            }
            var out = [UInt8]()
            out.append(contentsOf: bytes[index..<scan])
            index = scan
            while true {
                guard index < bytes.count else {
                    throw error("unterminated string", at: start)
                }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    break
                }
                if byte < 0x20 {
                    throw error("control character in string (escape it as \\u00XX)")
                }
                if byte != UInt8(ascii: "\\") {
                    out.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard index < bytes.count else { throw error("unterminated string", at: start) }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate in \\u escape") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error("unpaired surrogate in \\u escape")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            }
            guard let text = String(validating: out, as: UTF8.self) else {
                throw error("invalid UTF-8 in string", at: start)
            }
            return text
        }

        private mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("invalid hex digit in \\u escape")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        private mutating func parseNumber() throws -> PreferenceValue {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("invalid number")
            }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if index < bytes.count, isDigit(bytes[index]) {
                    throw error("numbers may not have leading zeros")
                }
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            var integral = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else {
                    throw error("expected digits after '.'")
                }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                integral = false
                index += 1
                if index < bytes.count,
                    bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
                {
                    index += 1
                }
                guard index < bytes.count, isDigit(bytes[index]) else {
                    throw error("expected digits in exponent")
                }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if integral, let number = integer(start..<index) { return .int(number) }
            let text = String(
                decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let number = Double(text), number.isFinite else {
                throw error("number \(text) is out of range", at: start)
            }
            return .double(number)
        }

        /// The integer spelled by the bytes in `range` (an optional minus and
        /// digits, already checked), or nil when it does not fit 64 bits.
        private func integer(_ range: Range<Int>) -> Int64? {
            var position = range.lowerBound
            let negative = bytes[position] == UInt8(ascii: "-")
            if negative { position += 1 }
            // Accumulate negatively: Int64.min has no positive counterpart.
            var value: Int64 = 0
            while position < range.upperBound {
                let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = times10.subtractingReportingOverflow(digit)
                if overflow1 || overflow2 { return nil }
                value = next
                position += 1
            }
            if negative { return value }
            return value == .min ? nil : -value
        }

        private func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }
    }
}
