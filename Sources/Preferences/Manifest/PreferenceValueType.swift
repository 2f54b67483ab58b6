#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The declared type of a key in a key manifest, and of `prefs set --type`.
///
/// Each type says which stored JSON values fit it and how a command-line
/// string becomes a stored value. The names are the ones `prefs` accepts:
/// `bool`, `int`, `double`, `string`, `json`, `date` and `data`.
///
/// ```swift
/// let zoom = try PreferenceValueType.double.parse("14.5", forKey: "map_zoom")  // .double(14.5)
/// PreferenceValueType.inferred(from: "42")                                     // .int
/// ```
public enum PreferenceValueType: String, Sendable, CaseIterable, Codable {
    /// `true` or `false`.
    case bool
    /// A 64-bit integer.
    case int
    /// A number; integers fit too, and the strings `NaN`, `Infinity`, `-Infinity`.
    case double
    /// Any string.
    case string
    /// Any JSON value: arrays, objects, and nested Codable types.
    case json
    /// An ISO 8601 date string, as dates are stored (<doc:FileFormat>).
    case date
    /// A base64 string, as `Data` is stored.
    case data

    /// The type `prefs set` gives an untyped command-line value
    /// (7.2, <doc:CommandLineTool>):
    /// `true`/`false` are bool, an integer literal is int, a decimal literal
    /// is double, and anything else is a string.
    public static func inferred(from text: String) -> PreferenceValueType {
        if text == "true" || text == "false" { return .bool }
        guard let isInteger = numberLiteralIsInteger(text) else { return .string }
        if isInteger {
            // Integers beyond 64 bits stay text rather than losing digits.
            return Int64(text) != nil ? .int : .string
        }
        // So do decimals beyond Double's range (1e400).
        return Double(text)?.isFinite == true ? .double : .string
    }

    /// Converts a command-line string into a stored value of this type, as
    /// a migration and `prefs import` convert text (``ValueConversion``; the
    /// spellings accepted are listed in <doc:MigratingAtStartUp>).
    ///
    /// - Throws: ``PreferencesError/invalidValue(key:reason:)`` naming `key`
    ///   and the text.
    public func parse(_ text: String, forKey key: String) throws -> PreferenceValue {
        if let value = ValueConversion(self).convert(.string(text)) { return value }
        var reason = "'\(text)' is not "
        switch self {
        case .bool: reason += "a bool (true, yes, on or 1; false, no, off or 0)"
        case .int: reason += "an integer"
        case .double: reason += "a number"
        case .json, .string:  // any text is a string
            reason += "JSON"
            do {
                _ = try PreferenceValue(jsonText: text, source: "value")
            } catch PreferencesError.corrupted(_, let why) {
                reason += ": \(why)"
            }
        case .date: reason += "an ISO 8601 date (2026-01-31T09:30:00Z)"
        case .data: reason += "base64 data"
        }
        throw PreferencesError.invalidValue(key: key, reason: reason)
    }

    /// Whether a stored value fits this type.
    ///
    /// An integer fits `double`, and a number with no fractional part fits
    /// `int`, matching how typed keys read (S7, <doc:StoreGuarantees>).
    public func accepts(_ value: PreferenceValue) -> Bool {
        switch (self, value) {
        case (.json, _): true
        case (.bool, .bool): true
        case (.int, _): value.integerValue != nil
        case (.double, _): value.numberValue != nil
        case (.string, .string): true
        case (.date, .string(let text)): ISO8601.parse(text) != nil
        case (.data, .string(let text)): Data(base64Encoded: text) != nil
        default: false
        }
    }

    /// A noun phrase for messages: "a bool", "an int".
    var phrase: String {
        switch self {
        case .bool: "a bool"
        case .int: "an int"
        case .double: "a double"
        case .string: "a string"
        case .json: "JSON"
        case .date: "a date"
        case .data: "base64 data"
        }
    }

    /// The type a Swift value type declares, looking through optionals; nil
    /// for types the JSON kind of their encoding must decide (enums, structs).
    init?(swiftType: Any.Type) {
        var type = swiftType
        while let optional = type as? any OptionalDeclaration.Type { type = optional.wrappedType }
        switch type {
        case is Bool.Type: self = .bool
        case is any FixedWidthInteger.Type: self = .int
        case is any BinaryFloatingPoint.Type: self = .double
        case is String.Type, is URL.Type: self = .string
        case is Date.Type: self = .date
        case is Data.Type: self = .data
        default: return nil
        }
    }

    /// The type whose values look like `value`: the JSON kind of a stored
    /// value (`.json` for arrays, objects, null and nil), which is how
    /// `prefs set` keeps a key's stored type (7.2, <doc:CommandLineTool>).
    public init(kindOf value: PreferenceValue?) {
        switch value {
        case .bool?: self = .bool
        case .int?: self = .int
        case .double?: self = .double
        case .string?: self = .string
        default: self = .json
        }
    }
}

/// Lets the manifest see through `Optional<Wrapped>` to `Wrapped`.
protocol OptionalDeclaration {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalDeclaration {
    static var wrappedType: Any.Type { Wrapped.self }
}

/// Whether `text`, a JSON-style decimal number literal (`-12`, `3.5`,
/// `1e-3`: no hex, no `inf`, no leading `+`, so that `Double("0x10")` does
/// not count as a number), is an integer; nil when it is no such literal.
private func numberLiteralIsInteger(_ text: String) -> Bool? {
    var bytes = Array(text.utf8)[...]
    if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
    func digits() -> Int {
        let count = bytes.prefix(while: { $0 >= 0x30 && $0 <= 0x39 }).count
        bytes = bytes.dropFirst(count)
        return count
    }
    guard digits() > 0 else { return nil }
    var integer = true
    if bytes.first == UInt8(ascii: ".") {
        bytes = bytes.dropFirst()
        guard digits() > 0 else { return nil }
        integer = false
    }
    if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
        bytes = bytes.dropFirst()
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") {
            bytes = bytes.dropFirst()
        }
        guard digits() > 0 else { return nil }
        integer = false
    }
    guard bytes.isEmpty else { return nil }
    return integer
}
