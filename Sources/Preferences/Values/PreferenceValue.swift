/// A stored value as it appears in the preferences file: a JSON value.
///
/// Typed keys and records convert to and from this representation; the
/// file, the change feed, migrations and the legacy importers all work with
/// it. Integers and floating-point numbers are kept apart so that a value
/// written as `3` reads back as `3`, not `3.0`.
///
/// ```swift
/// let value: PreferenceValue = ["dark_mode": true, "zoom": 14.5]
/// if case .object(let fields) = value { print(fields.keys.sorted()) }
/// ```
public enum PreferenceValue: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer (a JSON number without fraction or exponent that fits 64 bits).
    case int(Int64)
    /// Any other JSON number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([PreferenceValue])
    /// An object with string keys.
    case object([String: PreferenceValue])
}

extension PreferenceValue {
    /// The JSON type name of this value, for messages ("a string", "an object").
    public var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value as compact JSON text, for messages and the command line.
    public var jsonText: String {
        JSONText.encode(self, pretty: false)
    }

    /// Parses one JSON value (any JSON, not only objects).
    ///
    /// - Throws: ``PreferencesError/corrupted(file:reason:)`` naming `source`
    ///   and the line and column of the first error.
    public init(jsonText: String, source: String = "<text>") throws {
        self = try JSONText.parse(Array(jsonText.utf8), source: source)
    }

    /// The member `name` of an object; nil when it has none, or for any
    /// other value. Reading a reply: `reply["header"]?["revision"]`.
    package subscript(name: String) -> Self? {
        if case .object(let fields) = self { fields[name] } else { nil }
    }

    /// The text of a string; nil for any other value.
    package var stringValue: String? { if case .string(let text) = self { text } else { nil } }

    /// The elements of an array; nil for any other value.
    package var arrayValue: [Self]? { if case .array(let items) = self { items } else { nil } }

    /// The value as a `Double` key reads it: integers, numbers, and the file
    /// format's spellings of the non-finite numbers; nil for anything else.
    var numberValue: Double? {
        switch self {
        case .int(let number): Double(number)
        case .double(let number): number
        case .string("NaN"): .nan
        case .string("Infinity"): .infinity
        case .string("-Infinity"): -.infinity
        default: nil
        }
    }

    /// The value as an integer key reads it: integers, and numbers with no
    /// fractional part; nil for anything else.
    package var integerValue: Int64? {
        switch self {
        case .int(let number): number
        case .double(let number): Int64(exactly: number)
        default: nil
        }
    }

    /// Nesting depth: 0 for a scalar, 1 for a flat array or object.
    var depth: Int {
        switch self {
        case .array(let items): 1 + (items.map(\.depth).max() ?? 0)
        case .object(let fields): 1 + (fields.values.map(\.depth).max() ?? 0)
        default: 0
        }
    }
}

// Not ExpressibleByNilLiteral on purpose: `nil` always means "no value"
// (an absent key), and `.null` a stored JSON null.
extension PreferenceValue: ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: PreferenceValue...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, PreferenceValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension PreferenceValue: CustomStringConvertible {
    /// Compact JSON.
    public var description: String { jsonText }
}
