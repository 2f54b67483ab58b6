/// The positional arguments a command takes: how usage shows them, how
/// many there must and may be, and what completion scripts offer for each.
///
/// ```swift
/// static let arguments = CommandArguments("KEY VALUE", 2...2, completing: [.keys, .nothing])
/// ```
struct CommandArguments: Sendable {
    /// As shown in usage and in the "missing" error: `KEY VALUE`.
    let synopsis: String
    /// How many the command needs.
    let minimum: Int
    /// How many it takes at most; nil for any number.
    let maximum: Int?
    /// What to offer at each position; the last applies to every later one
    /// when ``maximum`` is nil.
    let completions: [Completion]

    /// Exactly or at most as many arguments as `count` says.
    init(_ synopsis: String, _ count: ClosedRange<Int>, completing completions: [Completion] = []) {
        self.synopsis = synopsis
        minimum = count.lowerBound
        maximum = count.upperBound
        self.completions = completions
    }

    /// At least `count.lowerBound` arguments, and any number more.
    init(_ synopsis: String, _ count: PartialRangeFrom<Int>, completing completions: [Completion]) {
        self.synopsis = synopsis
        minimum = count.lowerBound
        maximum = nil
        self.completions = completions
    }

    /// No positional arguments.
    static let none = CommandArguments("", 0...0)
}
