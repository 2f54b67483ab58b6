import Configuration
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ConfigContent {
    /// `stored` read as `type`.
    ///
    /// - Throws: ``PreferencesProviderError`` naming `key`, `type` and what is
    ///   stored, when `stored` is not of `type`.
    static func converting(
        _ stored: PreferenceValue, to type: ConfigType, key: AbsoluteConfigKey
    ) throws -> ConfigContent {
        let content: ConfigContent? =
            switch type {
            case .string: stored.stringValue.map(ConfigContent.string)
            case .int: stored.intValue.map(ConfigContent.int)
            case .double: stored.doubleValue.map(ConfigContent.double)
            case .bool: stored.boolValue.map(ConfigContent.bool)
            case .bytes: stored.bytesValue.map(ConfigContent.bytes)
            case .stringArray: stored.elements(\.stringValue).map(ConfigContent.stringArray)
            case .intArray: stored.elements(\.intValue).map(ConfigContent.intArray)
            case .doubleArray: stored.elements(\.doubleValue).map(ConfigContent.doubleArray)
            case .boolArray: stored.elements(\.boolValue).map(ConfigContent.boolArray)
            case .byteChunkArray: stored.elements(\.bytesValue).map(ConfigContent.byteChunkArray)
            }
        guard let content else {
            throw PreferencesProviderError(
                key: key.description, requestedType: type, storedType: stored.typeDescription)
        }
        return content
    }
}

extension PreferenceValue {
    fileprivate var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// An integer, a number with no fractional part, or a bool (1 or 0),
    /// as swift-configuration's JSON provider reads an `int`.
    fileprivate var intValue: Int? {
        switch self {
        case .int(let number): Int(exactly: number)
        case .double(let number): Int(exactly: number)
        case .bool(let flag): flag ? 1 : 0
        default: nil
        }
    }

    /// A number that a `Double` holds exactly (an integer above 2^53 that
    /// it would round is refused), a bool (1 or 0), as swift-configuration's
    /// JSON provider reads a `double`; and the store's spellings of the
    /// non-finite numbers, which JSON cannot write.
    fileprivate var doubleValue: Double? {
        switch self {
        case .int(let number): Double(exactly: number)
        case .double(let number): number
        case .bool(let flag): flag ? 1 : 0
        case .string("NaN"): .nan
        case .string("Infinity"): .infinity
        case .string("-Infinity"): -.infinity
        default: nil
        }
    }

    /// A bool, or a number (true unless zero), as swift-configuration's
    /// JSON provider reads a `bool`.
    fileprivate var boolValue: Bool? {
        switch self {
        case .bool(let flag): flag
        case .int(let number): number != 0
        case .double(let number): number != 0
        default: nil
        }
    }

    /// The bytes of a stored `Data` value (its base64 text).
    fileprivate var bytesValue: [UInt8]? {
        guard case .string(let text) = self, let data = Data(base64Encoded: text) else {
            return nil
        }
        return [UInt8](data)
    }

    /// Each element of an array read with `element`; nil when this is not
    /// an array or an element does not read.
    fileprivate func elements<Element>(_ element: (PreferenceValue) -> Element?) -> [Element]? {
        guard case .array(let items) = self else { return nil }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let value = element(item) else { return nil }
            result.append(value)
        }
        return result
    }
}
