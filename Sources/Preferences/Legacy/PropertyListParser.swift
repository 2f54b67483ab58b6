#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads Apple property lists, XML (`<?xml …?><plist>`) and binary
/// (`bplist00`), into the same values.
///
/// Both readers are written here rather than taken from Foundation's
/// `PropertyListSerialization`, whose Linux build differs from Apple's in
/// what it accepts and silently turns integers beyond `Int64` and keyed
/// archive UIDs into other types. The root must be a dictionary; a date
/// becomes an ISO 8601 UTC string (`2004-10-26T10:33:33Z`; a binary date
/// with a fraction of a second keeps it to the microsecond,
/// `2026-04-22T08:23:15.697223Z`, as Python's plistlib reads it) and data a
/// base64 string. Integers beyond `Int64` and UIDs
/// cannot be stored: they are an error naming the key path (`a.b[2].c`).
enum PropertyListParser {
    /// Parses an XML or binary property list whose root is a dictionary.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``;
    ///   XML errors carry a line and column, binary ones a byte offset in the
    ///   reason.
    static func parse(_ bytes: [UInt8], file: String) throws -> [String: PreferenceValue] {
        let root: PreferenceValue
        if bytes.starts(with: Array("bplist".utf8)) {
            var reader = BinaryPropertyList(bytes: bytes, file: file)
            root = try reader.root()
        } else {
            root = try XMLPropertyList(
                bytes: LegacyXML.utf8Document(bytes, file: file), file: file
            ).root()
        }
        guard case .object(let values) = root else {
            throw PreferencesError.legacyFormat(
                file: file, line: nil, column: nil,
                reason: "the root of the property list is \(root.typeDescription), not a dictionary"
            )
        }
        return values
    }

    /// `path` with `key` appended, for messages: `a.b`, `a[3]`.
    static func join(_ path: String, key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The UTC calendar date of `seconds` since 1970 as `2004-10-26T10:33:33Z`,
    /// with six fraction digits when `microseconds` is not 0.
    static func isoDate(unixSeconds seconds: Int64, microseconds: Int64 = 0) -> String {
        let fraction = String(microseconds)
        return ISO8601.stemText(seconds)
            + (microseconds == 0
                ? "" : "." + String(repeating: "0", count: 6 - fraction.count) + fraction) + "Z"
    }
}

/// The XML form: `<plist>` around one value (a bare value element is also
/// accepted, as CoreFoundation does).
private struct XMLPropertyList {
    let bytes: [UInt8]
    let file: String

    func error(_ reason: String, _ element: LegacyXML.Element) -> PreferencesError {
        LegacyXML.error(reason, at: element.offset, in: bytes, file: file)
    }

    func root() throws -> PreferenceValue {
        let document = try LegacyXML.parse(bytes, file: file)
        guard document.name == "plist" else { return try value(document, path: "") }
        try requireNoText(document)
        let elements = document.elements
        guard elements.count == 1 else {
            throw error("<plist> holds \(elements.count) values, not one", document)
        }
        return try value(elements[0], path: "")
    }

    private func requireNoText(_ element: LegacyXML.Element) throws {
        for case .text(let text) in element.children
        where !text.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" }) {
            throw error("unexpected text inside <\(element.name)>", element)
        }
    }

    private func text(_ element: LegacyXML.Element) throws -> String {
        var result = ""
        for child in element.children {
            switch child {
            case .text(let part): result += part
            case .element(let inner):
                throw error("unexpected <\(inner.name)> inside <\(element.name)>", inner)
            }
        }
        return result
    }

    private func at(_ path: String) -> String { path.isEmpty ? "" : " at '\(path)'" }

    private func value(_ element: LegacyXML.Element, path: String) throws -> PreferenceValue {
        switch element.name {
        case "dict":
            try requireNoText(element)
            var result: [String: PreferenceValue] = [:]
            var pendingKey: String? = nil
            for child in element.elements {
                if let key = pendingKey {
                    result[key] = try value(child, path: PropertyListParser.join(path, key: key))
                    pendingKey = nil
                } else {
                    guard child.name == "key" else {
                        throw error(
                            "expected <key> in <dict>\(at(path)), found <\(child.name)>", child)
                    }
                    pendingKey = try text(child)
                }
            }
            if let key = pendingKey {
                throw error(
                    "key '\(PropertyListParser.join(path, key: key))' has no value", element)
            }
            return .object(result)
        case "array":
            try requireNoText(element)
            return .array(
                try element.elements.enumerated().map { try value($1, path: "\(path)[\($0)]") })
        case "string":
            return .string(try text(element))
        case "true", "false":
            guard element.children.isEmpty else {
                throw error("<\(element.name)/>\(at(path)) must be empty", element)
            }
            return .bool(element.name == "true")
        case "integer":
            let literal = try text(element).trimmingWhitespace()
            return .int(try integer(literal, path: path, element: element))
        case "real":
            let literal = try text(element).trimmingWhitespace()
            guard let number = Double(literal) else {
                throw error("<real>\(at(path)) holds '\(literal)', which is not a number", element)
            }
            return .double(number)
        case "date":
            let literal = try text(element).trimmingWhitespace()
            guard let date = isoDate(literal) else {
                throw error("<date>\(at(path)) holds '\(literal)', which is not a date", element)
            }
            return .string(date)
        case "data":
            let literal = try text(element).filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: literal) else {
                throw error("<data>\(at(path)) is not valid base64", element)
            }
            return .string(data.base64EncodedString())
        case "key":
            throw error("<key> outside a <dict>\(at(path))", element)
        default:
            throw error("unknown property list element <\(element.name)>\(at(path))", element)
        }
    }

    /// A decimal or `0x` hexadecimal integer with an optional sign.
    private func integer(_ literal: String, path: String, element: LegacyXML.Element) throws
        -> Int64
    {
        var digits = Substring(literal)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }),
            radix == 16 || digits.allSatisfy(\.isNumber)
        else {
            throw error("<integer>\(at(path)) holds '\(literal)', which is not an integer", element)
        }
        guard let magnitude = UInt64(digits, radix: radix),
            let value = negative
                ? (magnitude <= UInt64(Int64.max) + 1
                    ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil)
                : Int64(exactly: magnitude)
        else {
            throw error(
                "integer \(literal)\(at(path)) does not fit in a signed 64-bit integer", element)
        }
        return value
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, normalised.
    private func isoDate(_ literal: String) -> String? {
        let parts = literal.split(
            omittingEmptySubsequences: false, whereSeparator: { "-T:Z".contains($0) })
        let shape = Array(literal.utf8)
        guard parts.count == 7, parts[6].isEmpty, shape.count == 20,
            shape[4] == UInt8(ascii: "-"), shape[7] == UInt8(ascii: "-"),
            shape[10] == UInt8(ascii: "T"), shape[13] == UInt8(ascii: ":"),
            shape[16] == UInt8(ascii: ":"), shape[19] == UInt8(ascii: "Z")
        else { return nil }
        let numbers = parts[0..<6].compactMap { part in
            part.allSatisfy { $0.isASCII && $0.isNumber } ? Int(part) : nil
        }
        guard numbers.count == 6, (1...12).contains(numbers[1]), (1...31).contains(numbers[2]),
            numbers[3] < 24, numbers[4] < 60, numbers[5] < 60
        else { return nil }
        return PropertyListParser.isoDate(
            unixSeconds: Platform.utcSeconds(
                year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3],
                minute: numbers[4], second: numbers[5]))
    }
}
