/// A type that declares options: a command, or ``GlobalOptions``.
///
/// Its options are static ``Flag`` and ``ValueOption`` members typed by
/// the owner (`static let json = Flag<GetCommand>(…)`), and listed once in
/// ``options`` for the parser and the help. ``ParsedOptions`` of one owner
/// reads only that owner's declarations, so a command that reads an option
/// it does not declare does not compile.
protocol OptionOwner: Sendable {
    /// Every option, in the order help shows them.
    static var options: [any OptionDeclaration] { get }
}

/// A typed option declaration: ``Flag`` or ``ValueOption``.
protocol OptionDeclaration: Sendable {
    /// What the parser, the help and the completion scripts need.
    var spec: OptionSpec { get }
}

extension OptionOwner {
    /// The specs of ``options``.
    static var optionSpecs: [OptionSpec] { options.map(\.spec) }

    /// The spec named `name` (with its dashes, long or short), if `Self`
    /// declares one.
    static func option(named name: String) -> OptionSpec? {
        options.lazy.map(\.spec).first { $0.names.contains(name) }
    }
}
