/// Something wrong that did not stop the store: a stored value of the wrong
/// type (S7), a corrupt file written by another program (C6), or a
/// migration clean-up that could not finish.
public struct PreferencesProblem: Sendable, Hashable, CustomStringConvertible {
    /// The key at fault, when there is one.
    public let key: String?
    /// One sentence describing the problem.
    public let message: String

    /// A problem about `key` (nil when it concerns the whole file).
    public init(key: String?, message: String) {
        self.key = key
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
