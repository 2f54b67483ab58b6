import Configuration

/// A stored value that cannot be read as the type asked for: a string
/// read with `int(forKey:)`, say.
///
/// Its description is the sentence swift-configuration's own providers
/// (its JSON file provider among them) give for the same mismatch, so logs
/// and tests read alike whichever provider held the value:
///
/// ```
/// Config value for key 'http.port' failed to convert to type int.
/// ```
///
/// ``storedType`` says what the store holds there instead.
public struct PreferencesProviderError: Error, Sendable, Equatable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// The key as swift-configuration prints it: its components joined
    /// with dots, then its context, if any, in brackets.
    public var key: String
    /// The type asked for.
    public var requestedType: ConfigType
    /// What the store holds for the key ("a string", "an object", …).
    public var storedType: String

    /// An error for `key`, asked for as `requestedType`, stored as `storedType`.
    public init(key: String, requestedType: ConfigType, storedType: String) {
        self.key = key
        self.requestedType = requestedType
        self.storedType = storedType
    }

    /// "Config value for key 'KEY' failed to convert to type TYPE."
    public var description: String {
        "Config value for key '\(key)' failed to convert to type \(requestedType)."
    }

    /// The description, then what is stored.
    public var debugDescription: String {
        "\(description) The store holds \(storedType)."
    }
}
