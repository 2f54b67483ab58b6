/// Reading JSON into ``PreferenceValue``s, with the line and column of
/// every error and the nesting limit checked while reading.
extension JSONText {
    /// The value of the hexadecimal digit `byte` (either case), or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let source: String
        let maxDepth: Int
        var index = 0
        /// Members of the objects being parsed, innermost last.
        var members: [(String, PreferenceValue)] = []

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

        func describe(_ byte: UInt8) -> String {
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
            try parseObject(depth: depth) { parser, _, _ in try parser.parseValue(depth: depth) }
        }

        /// Reads the object at `index`, nested `depth` levels deep, as
        /// ``parseValue(depth:)`` does, except that each member's value is
        /// read by `readValue`: given the parser at the value, the key, and
        /// where the key's string literal is (quotes included), it moves
        /// past the value and returns what the object holds for it. A
        /// reader of one kind of document reads some members its own way so.
        mutating func parseObject(
            depth: Int,
            readValue: (inout Parser, _ key: String, _ keyLiteral: Range<Int>) throws ->
                PreferenceValue
        ) throws -> PreferenceValue {
            // Members are gathered first and the dictionary built at its final
            // size, so a large object is never rehashed while it grows. Nested
            // objects share the one buffer, each above its parent's members.
            let first = members.count
            defer { members.removeSubrange(first...) }
            try walk(depth: depth) { parser in
                let keyStart = parser.index
                let key = try parser.parseString()
                let keyLiteral = keyStart..<parser.index
                try parser.skipColon(afterKey: key)
                parser.members.append((key, try readValue(&parser, key, keyLiteral)))
            }
            var fields = [String: PreferenceValue](minimumCapacity: members.count - first)
            // Last duplicate wins, as in most JSON readers.
            for position in first..<members.count {
                fields[members[position].0] = members[position].1
            }
            return .object(fields)
        }

        /// The members of the object at `index`, in the order of the text.
        mutating func parseMembers() throws -> [(key: String, value: PreferenceValue)] {
            var found: [(key: String, value: PreferenceValue)] = []
            try walk(depth: 1) { parser in
                let key = try parser.parseString()
                try parser.skipColon(afterKey: key)
                found.append((key, try parser.parseValue(depth: 1)))
            }
            return found
        }

        private mutating func parseArray(depth: Int) throws -> PreferenceValue {
            var items = [PreferenceValue]()
            try walk(depth: depth) { items.append(try $0.parseValue(depth: depth)) }
            return .array(items)
        }

        /// Moves past the object or array whose opening bracket is at
        /// `index`, nested `depth` levels deep, calling `element` with the
        /// parser at each element (an object's at its key's opening quote),
        /// which moves past it; a missing `,` or closing bracket throws.
        @inline(__always)
        mutating func walk(depth: Int, _ element: (inout Parser) throws -> Void) throws {
            let isObject = bytes[index] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let kind = isObject ? "object" : "array"
            if depth > maxDepth { throw error("nested deeper than \(maxDepth) levels") }
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
                }
                try element(&self)
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of text in \(kind)") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == close {
                    index += 1
                    return
                } else {
                    throw error(
                        "expected ',' or \(describe(close)) in \(kind), found \(describe(bytes[index]))"
                    )
                }
            }
        }

        mutating func parseString() throws -> String {
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
                guard let digit = JSONText.hexValue(bytes[index]) else {
                    throw error("invalid hex digit in \\u escape")
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

extension JSONText.Parser {
    /// Steps over the `:` after the key `key` and the whitespace around it,
    /// or fails naming the key.
    mutating func skipColon(afterKey key: String) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
            throw error("expected ':' after key \"\(key)\"")
        }
        index += 1
        skipWhitespace()
    }

    /// ``skipColon(afterKey:)`` for a key stepped over unread, which starts
    /// at `keyStart`: it is read only to name it when the `:` is missing.
    mutating func skipColon(afterKeyAt keyStart: Int) throws {
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
}
