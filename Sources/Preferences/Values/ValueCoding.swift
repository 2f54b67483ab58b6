#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Converts between Swift values and ``PreferenceValue``.
///
/// Common scalar types take a direct path (no encoder, no allocation); every
/// other `Codable` type goes through `JSONEncoder`/`JSONDecoder` configured
/// for the file format (<doc:FileFormat>): `Data` as base64, `Date` as ISO 8601 UTC,
/// non-finite numbers as `"NaN"`, `"Infinity"`, `"-Infinity"`, and nested
/// types as nested JSON (never JSON inside a string).
enum ValueCoding {
    static func encode<T: Encodable>(_ value: T) throws -> PreferenceValue {
        switch value {
        case let flag as Bool: return .bool(flag)
        case let text as String: return .string(text)
        case let number as Int: return .int(Int64(number))
        case let number as Double: return encodeDouble(number)
        case let number as Int64: return .int(number)
        case let number as Float: return encodeFloat(number)
        case let date as Date:
            if let problem = ISO8601.problem(with: date) { throw OutOfRange(reason: problem) }
            return .string(ISO8601.format(date))
        case let data as Data: return .string(data.base64EncodedString())
        case let url as URL: return .string(url.absoluteString)
        default:
            let data = try makeEncoder().encode(value)
            return try JSONText.parse(Array(data), source: "encoded value")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: PreferenceValue) throws -> T {
        if let direct = try decodeScalar(type, from: value) { return direct }
        let bytes = JSONText.encodeBytes(value, pretty: false)
        return try makeDecoder().decode(T.self, from: Data(bytes))
    }

    /// Non-finite numbers are stored as strings (JSON has none), which also
    /// keeps `NaN` equal to itself when comparing states.
    private static func encodeDouble(_ number: Double) -> PreferenceValue {
        if number.isNaN { return .string("NaN") }
        if number.isInfinite { return .string(number > 0 ? "Infinity" : "-Infinity") }
        return .double(number)
    }

    private static func encodeFloat(_ number: Float) -> PreferenceValue {
        if !number.isFinite { return encodeDouble(Double(number)) }
        // The shortest text that reads back as this Float ("0.1", not 0.10000000149).
        return .double(Double(number.description) ?? Double(number))
    }

    /// A value the file format cannot hold (a date beyond year 9999).
    struct OutOfRange: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// nil when `T` is not a scalar type with a direct path.
    private static func decodeScalar<T>(_ type: T.Type, from value: PreferenceValue) throws -> T? {
        if T.self == Bool.self {
            guard case .bool(let flag) = value else { throw mismatch(value, "a boolean") }
            return (flag as! T)
        }
        if T.self == String.self {
            guard case .string(let text) = value else { throw mismatch(value, "a string") }
            return (text as! T)
        }
        if T.self == Int.self {
            guard let number = value.integerValue, let result = Int(exactly: number) else {
                throw mismatch(value, "an integer")
            }
            return (result as! T)
        }
        if T.self == Double.self {
            guard let number = value.numberValue else { throw mismatch(value, "a number") }
            return (number as! T)
        }
        if T.self == Int64.self {
            guard let number = value.integerValue else { throw mismatch(value, "an integer") }
            return (number as! T)
        }
        if T.self == Float.self {
            guard let number = value.numberValue else { throw mismatch(value, "a number") }
            return (Float(number) as! T)
        }
        if T.self == Date.self {
            guard case .string(let text) = value, let date = ISO8601.parse(text) else {
                throw mismatch(value, "an ISO 8601 date")
            }
            return (date as! T)
        }
        if T.self == Data.self {
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
                throw mismatch(value, "base64 data")
            }
            return (data as! T)
        }
        if T.self == URL.self {
            guard case .string(let text) = value, let url = URL(string: text) else {
                throw mismatch(value, "a URL")
            }
            return (url as! T)
        }
        return nil
    }

    private static func mismatch(_ value: PreferenceValue, _ expected: String) -> DecodingError {
        .typeMismatch(
            Any.self,
            .init(
                codingPath: [],
                debugDescription: "expected \(expected), found \(value.typeDescription)"))
    }

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dataEncodingStrategy = .base64
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            if let problem = ISO8601.problem(with: date) {
                throw EncodingError.invalidValue(
                    date, .init(codingPath: encoder.codingPath, debugDescription: problem))
            }
            try container.encode(ISO8601.format(date))
        }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dataDecodingStrategy = .base64
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "'\(text)' is not an ISO 8601 date")
            }
            return date
        }
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }

    /// A short human description of why decoding failed, with the coding path.
    static func describe(_ error: any Error) -> String {
        if case EncodingError.invalidValue(_, let context) = error {
            return context.debugDescription
        }
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let names = context.codingPath.map { key in
                key.intValue.map { "[\($0)]" } ?? key.stringValue
            }
            return names.isEmpty ? "" : " at \(names.joined(separator: "."))"
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            return context.debugDescription + path(context)
        case .keyNotFound(let key, let context):
            return "missing field '\(key.stringValue)'" + path(context)
        @unknown default:
            return "\(error)"
        }
    }
}
