import Foundation
import Preferences

/// A value typed on the command line, ready to store.
///
/// Dates stay `Date` until they are stored, so the library writes them in
/// exactly the form it writes any other date (SPEC §5).
enum CommandLineValue: Sendable, Equatable {
    case value(PreferenceValue)
    case date(Date)

    /// Stores the value for `key` inside an edit.
    func store(in preferences: inout MutablePreferences, key: String) throws {
        switch self {
        case .value(let value): preferences[raw: key] = value
        case .date(let date): try preferences.set(date, forKey: key)
        }
    }

    /// The value as the file will hold it, for validation: dates as ISO 8601 UTC text.
    var storedForm: PreferenceValue {
        switch self {
        case .value(let value): return value
        case .date(let date):
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return .string(formatter.string(from: date))
        }
    }

    /// Reads `text` as `type` (SPEC §7.2, with --type).
    static func parse(_ text: String, as type: ValueType, key: String) throws(CommandFailure)
        -> CommandLineValue
    {
        func invalid(_ reason: String) -> CommandFailure {
            CommandFailure(.invalidValue, "invalid value for key '\(key)': \(reason)")
        }
        switch type {
        case .string:
            return .value(.string(text))
        case .bool:
            switch text {
            case "true": return .value(.bool(true))
            case "false": return .value(.bool(false))
            default: throw invalid("'\(text)' is not a bool (use true or false)")
            }
        case .int:
            guard isIntegerLiteral(text), let number = Int64(text) else {
                throw invalid("'\(text)' is not an integer in the 64-bit range")
            }
            return .value(.int(number))
        case .double:
            guard let number = double(text) else {
                throw invalid("'\(text)' is not a number")
            }
            return .value(.double(number))
        case .json:
            do {
                return .value(try PreferenceValue(jsonText: text, source: "the value"))
            } catch {
                throw invalid("not JSON: \(reason(error))")
            }
        case .date:
            guard let date = date(text) else {
                throw invalid("'\(text)' is not an ISO 8601 date (2026-03-01T09:30:00Z)")
            }
            return .date(date)
        case .data:
            guard let data = Data(base64Encoded: text) else {
                throw invalid("'\(text)' is not base64")
            }
            return .value(.string(data.base64EncodedString()))
        }
    }

    /// The type of an untyped value (SPEC §7.2): true/false → bool, an
    /// integer literal that fits 64 bits → int, a decimal literal → double,
    /// anything else (including larger integers) → string.
    static func infer(_ text: String) -> PreferenceValue {
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        if isIntegerLiteral(text), let number = Int64(text) { return .int(number) }
        if isDecimalLiteral(text), let number = Double(text), number.isFinite {
            return .double(number)
        }
        return .string(text)
    }

    /// `-?[0-9]+`.
    static func isIntegerLiteral(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        return !digits.isEmpty && digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// A JSON number with a fraction or an exponent: `1.5`, `-0.25`, `2e3`.
    static func isDecimalLiteral(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let count = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        guard digits() > 0 else { return false }
        var decimal = false
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
            decimal = true
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") {
                bytes = bytes.dropFirst()
            }
            guard digits() > 0 else { return false }
            decimal = true
        }
        return decimal && bytes.isEmpty
    }

    /// A decimal literal, an integer literal, or NaN / Infinity / -Infinity
    /// (the file format's spellings of the non-finite doubles).
    private static func double(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            guard isIntegerLiteral(text) || isDecimalLiteral(text) else { return nil }
            return Double(text).flatMap { $0.isFinite ? $0 : nil }
        }
    }

    /// ISO 8601: a date and time with `Z` or an offset, optionally with
    /// fractional seconds, or a date alone (midnight UTC).
    private static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        let layouts: [ISO8601DateFormatter.Options] = [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
            [.withFullDate],
        ]
        for layout in layouts {
            formatter.formatOptions = layout
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// The message of a library error without its own prefix.
    private static func reason(_ error: any Error) -> String {
        if case PreferencesError.corrupted(_, let reason) = error { return reason }
        return "\(error)"
    }
}
