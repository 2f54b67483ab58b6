/// The namespace for your typed keys. Extend it with static properties:
///
/// ```swift
/// extension PreferenceKeys {
///     static let darkMode = PreferenceKey<Bool>("dark_mode", default: false)
///     static let mapZoom = PreferenceKey<Double>("map_zoom", default: 14)
/// }
///
/// store[.darkMode]  // false until set
/// ```
public class PreferenceKeys: @unchecked Sendable {
    fileprivate init() {}
}

/// A typed key: its name in the file and the value a read returns when the
/// key is not stored.
///
/// Defaults live in code and are never written (S6, <doc:StoreGuarantees>),
/// so changing a default changes it for everyone who never set the key.
/// `Value` may be any `Codable & Sendable` type: the scalars (`Bool`, `Int`,
/// `Int64`, `Double`, `Float`, `String`, `Data`, `Date`, `URL`), arrays and
/// string-keyed dictionaries of them, optionals, `String`- or `Int`-backed
/// enums declared `Codable`, and your own `Codable` types, which are stored
/// as nested JSON.
///
/// ```swift
/// enum Theme: String, Codable, Sendable { case light, dark }
/// extension PreferenceKeys {
///     static let theme = PreferenceKey<Theme>("theme", default: .light)
///     static let lastSync = PreferenceKey<Date?>("last_sync", default: nil)
/// }
/// ```
///
/// Storing `nil` in an optional key removes the key, so its default applies again.
public final class PreferenceKey<Value: Codable & Sendable>: PreferenceKeys, @unchecked Sendable {
    /// The key's name in the file (`values` object) and on the command line.
    public let name: String
    /// What reads return while the key is not stored, or holds a value of the wrong type.
    public let defaultValue: Value
    /// A description for the key manifest and `prefs check`.
    public let help: String?
    /// Whether the value is a secret: kept out of the history and hidden by
    /// `prefs` (A3, <doc:ChangingSettingsSafely>).
    public let secret: Bool
    /// Which direct decoding path `Value` takes (decided once, here).
    @usableFromInline
    let scalar: ScalarKind

    /// Declares a key.
    ///
    /// - Parameters:
    ///   - name: the key in the file: non-empty, at most 1 KiB of UTF-8, no control characters.
    ///   - defaultValue: the value reads return while the key is not stored.
    ///   - help: an optional description, carried into a generated manifest.
    ///   - secret: whether the value is a secret (a password, a token): a
    ///     store that declares it keeps it out of the history and its file
    ///     readable by its owner only, and `prefs` shows it as `<redacted>`
    ///     except when asked for it by name.
    public init(
        _ name: String, default defaultValue: Value, help: String? = nil, secret: Bool = false
    ) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.secret = secret
        self.scalar = ScalarKind(Value.self)
        super.init()
    }

    /// Decodes this key's value from a stored value.
    func decode(_ stored: PreferenceValue) throws -> Value {
        if let value = fastDecode(stored) { return value }
        return try ValueCoding.decode(Value.self, from: stored)
    }

    /// Decodes, turning a failure into ``PreferencesError/typeMismatch(key:expected:found:)``
    /// (S7, <doc:StoreGuarantees>).
    func value(from stored: PreferenceValue) throws -> Value {
        do {
            return try decode(stored)
        } catch {
            throw PreferencesError.typeMismatch(
                key: name, expected: "\(Value.self)",
                found: "\(stored.typeDescription) \(stored.jsonText.prefix(80))")
        }
    }

    /// The common scalar cases without dynamic casts; nil means "take the
    /// general path" (which also produces the error for a mismatch).
    @inlinable
    func fastDecode(_ stored: PreferenceValue) -> Value? {
        // `scalar` was derived from `Value.self`, so each bit cast is between
        // identical types.
        switch (scalar, stored) {
        case (.bool, .bool(let flag)): return unsafeBitCast(flag, to: Value.self)
        case (.string, .string(let text)): return unsafeBitCast(text, to: Value.self)
        case (.int, .int(let number)): return unsafeBitCast(Int(number), to: Value.self)
        case (.int64, .int(let number)): return unsafeBitCast(number, to: Value.self)
        case (.double, .double(let number)): return unsafeBitCast(number, to: Value.self)
        case (.double, .int(let number)): return unsafeBitCast(Double(number), to: Value.self)
        default: return nil
        }
    }

    /// Encodes a value of this key; nil when it encodes as `null` (meaning "remove").
    func encode(_ value: Value) throws -> PreferenceValue? {
        let encoded = try ValueCoding.encode(value)
        return encoded == .null ? nil : encoded
    }
}

extension PreferenceKey: CustomStringConvertible {
    /// The key's type and name, for debugging.
    public var description: String { "PreferenceKey<\(Value.self)>(\"\(name)\")" }
}

/// The scalar types with a direct decoding path.
@usableFromInline
enum ScalarKind: Sendable {
    case bool, string, int, int64, double, other

    init<T>(_ type: T.Type) {
        if T.self == Bool.self {
            self = .bool
        } else if T.self == String.self {
            self = .string
        } else if T.self == Int.self {
            self = .int
        } else if T.self == Int64.self {
            self = .int64
        } else if T.self == Double.self {
            self = .double
        } else {
            self = .other
        }
    }
}
