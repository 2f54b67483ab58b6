#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A type that a migration converts stored or imported values into.
///
/// Legacy sources such as properties files and envdir directories hold only
/// strings, and older versions of an app may have stored numbers as text.
/// A value type turns such a value into the JSON value the new key expects,
/// or reports that it cannot:
///
/// ```swift
/// ValueConversion.double.convert("14.5")   // .double(14.5)
/// ValueConversion.bool.convert("YES")      // .bool(true)
/// ValueConversion.int.convert("fourteen")  // nil: does not parse
/// ValueConversion(of: PreferenceKeys.mapZoom).convert("3")  // .double(3)
/// ```
///
/// Used by ``MigrationStep/retype(_:as:)``, ``LegacyImport``'s ``KeyTypes``
/// and `prefs`, so text converts alike everywhere (<doc:MigratingAtStartUp>
/// lists the spellings). A value that does not convert fails the migration
/// with an error naming the key and the value; nothing is written.
public struct ValueConversion: Sendable, CustomStringConvertible {
    /// The type's name, as error messages show it ("Bool", "Double").
    public let description: String
    private let conversion: @Sendable (PreferenceValue) -> PreferenceValue?

    /// A custom type: `convert` returns the converted value, or nil when the
    /// value does not fit.
    ///
    /// ```swift
    /// let percent = ValueConversion("percentage") { value in
    ///     guard case .string(let text) = value, text.hasSuffix("%"),
    ///           let number = Double(text.dropLast()) else { return nil }
    ///     return .double(number / 100)
    /// }
    /// ```
    public init(
        _ name: String, convert: @escaping @Sendable (PreferenceValue) -> PreferenceValue?
    ) {
        self.description = name
        self.conversion = convert
    }

    /// The type of a typed key: a value converts when it, or its conversion
    /// to the key's type (``bool`` for a `Bool` key; for enums and structs,
    /// a string read as a Bool, integer, number or JSON), decodes as `Value`.
    ///
    /// ```swift
    /// ValueConversion(of: PreferenceKeys.darkMode).convert("true")  // .bool(true)
    /// ```
    public init<Value>(of key: PreferenceKey<Value>) {
        let candidates =
            PreferenceValueType(swiftType: Value.self).map { [ValueConversion($0)] }
            ?? [.bool, .int, .double, .json]
        self.init("\(Value.self)") { value in
            func stored(_ candidate: PreferenceValue) -> PreferenceValue? {
                guard let decoded = try? key.decode(candidate) else { return nil }
                return (try? key.encode(decoded)) ?? .null
            }
            if let direct = stored(value) { return direct }
            for type in candidates {
                if let candidate = type.convert(value), let converted = stored(candidate) {
                    return converted
                }
            }
            return nil
        }
    }

    /// The conversion of a type a key manifest or `prefs set --type` names;
    /// dates take ISO 8601 text (stored in UTC), data base64 (stored canonical).
    public init(_ type: PreferenceValueType) {
        switch type {
        case .bool: self = .bool
        case .int: self = .int
        case .double: self = .double
        case .string: self = .string
        case .json: self = .json
        case .date: self.init("Date", decoding: Date.self)
        case .data: self.init("Data", decoding: Data.self)
        }
    }

    /// Text that decodes as `T` once trimmed, stored as `T` is encoded.
    private init<T: Codable & Sendable>(_ name: String, decoding type: T.Type) {
        self.init(name) { value in
            guard case .string(let text) = value else { return nil }
            return try? ValueCoding.encode(
                ValueCoding.decode(T.self, from: .string(text.trimmingWhitespace())))
        }
    }

    /// The value converted to this type, or nil when it does not fit. A
    /// result of ``PreferenceValue/null`` means "remove the key" (an
    /// optional key's `nil`).
    public func convert(_ value: PreferenceValue) -> PreferenceValue? {
        conversion(value)
    }

    /// Booleans: `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0` in any case
    /// (surrounding whitespace ignored), and the integers 1 and 0.
    public static let bool = ValueConversion("Bool") { value in
        switch value {
        case .bool: return value
        case .int(1): return .bool(true)
        case .int(0): return .bool(false)
        case .string(let text):
            switch text.trimmingWhitespace().lowercased() {
            case "true", "yes", "on", "1": return .bool(true)
            case "false", "no", "off", "0": return .bool(false)
            default: return nil
            }
        default: return nil
        }
    }

    /// 64-bit integers: decimal text with a whole value (`42`, `+5`, `3.0`,
    /// `1e3`), and numbers with no fractional part.
    public static let int = ValueConversion("Int") { value in
        switch value {
        case .int: return value
        case .double(let number): return Int64(exactly: number).map { .int($0) }
        case .string(let text):
            let text = text.trimmingWhitespace()
            if let number = Int64(text) { return .int(number) }
            if isDecimal(text), let number = Double(text) {
                return Int64(exactly: number).map { .int($0) }
            }
            return nil
        default: return nil
        }
    }

    /// Double-precision numbers: integers, and decimal text (`14.5`, `-3`,
    /// `+2`, `.5`, `1e3`; surrounding whitespace ignored); `NaN`, `Infinity`
    /// and `-Infinity` are stored as the file format spells them.
    public static let double = ValueConversion("Double") { value in
        switch value {
        case .double: return value
        case .int(let number): return .double(Double(number))
        case .string(let text):
            let text = text.trimmingWhitespace()
            if ["NaN", "Infinity", "-Infinity"].contains(text) { return .string(text) }
            guard isDecimal(text), let number = Double(text), number.isFinite else { return nil }
            return .double(number)
        default: return nil
        }
    }

    /// Text: strings as they are (never trimmed); booleans and numbers as
    /// their JSON text.
    public static let string = ValueConversion("String") { value in
        switch value {
        case .string: return value
        case .bool, .int, .double: return .string(value.jsonText)
        default: return nil
        }
    }

    /// Any JSON: a string is parsed as JSON text (`[1,2]`, `{"a":1}`);
    /// other values stay as they are.
    public static let json = ValueConversion("JSON") { value in
        guard case .string(let text) = value else { return value }
        return try? PreferenceValue(jsonText: text)
    }

    /// Plain decimal notation only: `Double("0x1p3")` and `Double("inf")` parse,
    /// but no settings file means them as numbers.
    private static func isDecimal(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { "0123456789+-.eE".contains($0) }
    }
}

extension ValueConversion {
    /// The one-line reason a value does not convert, naming the key and the value.
    func mismatch(key: String, value: PreferenceValue) -> String {
        "key '\(key)' holds \(value.jsonText.prefix(80)), which is not a valid \(description)"
    }
}
