extension PreferencesManifest {
    /// One declared key: its type, default, description and limits.
    ///
    /// ```swift
    /// let zoom = PreferencesManifest.Entry(
    ///     type: .double, defaultValue: 14, help: "Map zoom level", minimum: 1, maximum: 20)
    /// zoom.problem(with: 25)  // "must be at most 20, not 25"
    /// ```
    public struct Entry: Sendable, Equatable {
        /// What values fit the key.
        public var type: PreferenceValueType
        /// What `prefs get` prints while the key is not stored; nil when there is none.
        public var defaultValue: PreferenceValue?
        /// A description for people (the manifest's `description`).
        public var help: String?
        /// The smallest number allowed (numeric types only).
        public var minimum: Double?
        /// The largest number allowed (numeric types only).
        public var maximum: Double?
        /// The only values allowed, when the key is an enumeration (the manifest's `enum`).
        public var allowedValues: [PreferenceValue]?
        /// Whether the value is a secret (the manifest's `secret`): shown as
        /// `<redacted>` by `prefs` except when asked for by name, kept out of
        /// the history, and the store's file kept readable by its owner only
        /// (A3, <doc:ChangingSettingsSafely>).
        public var secret: Bool

        /// Declares an entry.
        public init(
            type: PreferenceValueType, defaultValue: PreferenceValue? = nil, help: String? = nil,
            minimum: Double? = nil, maximum: Double? = nil, allowedValues: [PreferenceValue]? = nil,
            secret: Bool = false
        ) {
            self.type = type
            self.defaultValue = defaultValue
            self.help = help
            self.minimum = minimum
            self.maximum = maximum
            self.allowedValues = allowedValues
            self.secret = secret
        }

        /// Why `value` does not fit this entry (a phrase such as
        /// `must be at most 20, not 25`), or nil when it fits.
        public func problem(with value: PreferenceValue) -> String? {
            guard type.accepts(value) else {
                return
                    "must be \(type.phrase), not \(value.typeDescription) \(value.jsonText.prefix(80))"
            }
            if let number = value.numberValue {
                // Written as `!(a >= b)` so that NaN is outside every range.
                if let minimum, !(number >= minimum) {
                    return "must be at least \(Self.text(minimum)), not \(value.jsonText)"
                }
                if let maximum, !(number <= maximum) {
                    return "must be at most \(Self.text(maximum)), not \(value.jsonText)"
                }
            }
            if let allowedValues, !allowedValues.contains(where: { Self.same($0, value) }) {
                let list = allowedValues.map(\.jsonText).joined(separator: ", ")
                return "must be one of \(list), not \(value.jsonText.prefix(80))"
            }
            return nil
        }

        /// Equality where `3` and `3.0` are the same number.
        static func same(_ left: PreferenceValue, _ right: PreferenceValue) -> Bool {
            switch (left, right) {
            case (.int, .double), (.double, .int): left.numberValue == right.numberValue
            default: left == right
            }
        }

        /// A bound as JSON: integral bounds without a fraction.
        static func bound(_ number: Double) -> PreferenceValue {
            if let integer = Int64(exactly: number) { return .int(integer) }
            return .double(number)
        }

        static func text(_ number: Double) -> String { bound(number).jsonText }
    }
}
