import Preferences

/// A JSON reader of the tests' own, apart from the library's: what a test
/// reads in a file, a line or a command's output is read by it, so that a
/// bug of the library's reader cannot hide one of its writer. It is plain
/// and strict enough for the texts the tests read: the store's files, the
/// history's lines, `--json` output.
package enum TestJSON {
    package struct Failure: Error, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
        package init(reason: String) { self.reason = reason }
    }

    /// `text` read as JSON.
    package static func parse(_ text: String) throws -> PreferenceValue {
        try parse(Array(text.utf8))
    }

    /// `bytes` read as JSON.
    package static func parse(_ bytes: [UInt8]) throws -> PreferenceValue {
        var reader = Reader(bytes: bytes)
        let value = try reader.value()
        reader.skipSpace()
        guard reader.index == bytes.count else { throw reader.failure("text after the value") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        func failure(_ what: String) -> Failure { Failure(reason: "\(what) at byte \(index)") }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) {
                index += 1
            }
        }

        mutating func expect(_ text: String) throws {
            let expected = Array(text.utf8)
            guard bytes[index...].starts(with: expected) else { throw failure("expected \(text)") }
            index += expected.count
        }

        mutating func value() throws -> PreferenceValue {
            skipSpace()
            guard index < bytes.count else { throw failure("a value missing") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["):
                index += 1
                var items: [PreferenceValue] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                while true {
                    items.append(try value())
                    skipSpace()
                    if bytes[index] == UInt8(ascii: "]") {
                        index += 1
                        return .array(items)
                    }
                    try expect(",")
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default: return try number()
            }
        }

        mutating func object() throws -> PreferenceValue {
            index += 1
            var members: [String: PreferenceValue] = [:]
            skipSpace()
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                let key = try string()
                skipSpace()
                try expect(":")
                members[key] = try value()
                skipSpace()
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                try expect(",")
            }
        }

        mutating func string() throws -> String {
            try expect("\"")
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run = []
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") {
                    flush()
                    return String(scalars)
                }
                guard byte == UInt8(ascii: "\\") else {
                    run.append(byte)
                    continue
                }
                flush()
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        try expect("\\u")
                        code = 0x10000 + (code - 0xD800) << 10 + (try hex4() - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("a bad \\u") }
                    scalars.append(scalar)
                default: scalars.append(Unicode.Scalar(escape))
                }
            }
            throw failure("an unended string")
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count,
                let code = UInt32(
                    String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
            else { throw failure("a bad \\u") }
            index += 4
            return code
        }

        mutating func number() throws -> PreferenceValue {
            let start = index
            while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if !text.contains(where: { ".eE".contains($0) }), let integer = Int64(text) {
                return .int(integer)
            }
            guard let number = Double(text) else { throw failure("a bad number \(text)") }
            return .double(number)
        }
    }
}
