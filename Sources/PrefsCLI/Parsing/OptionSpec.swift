/// What the parser, the help text and the completion scripts know of one
/// option: its name, whether it takes a value, and what that value is.
///
/// Commands do not declare these directly: they declare a typed ``Flag``
/// or ``ValueOption``, which carries its spec.
struct OptionSpec: Sendable {
    /// The long name, with its dashes: `--format`.
    let name: String
    /// Another name: a dash and one letter (`-n`), or nil. The parser takes
    /// it as ``name``; usage shows it instead of the long name.
    let shortName: String?
    /// The placeholder shown in help (`FORMAT`); nil for a flag.
    let valueName: String?
    /// One line for `--help`.
    let help: String
    /// What a completion script offers for the value.
    let completion: Completion
    /// Left out of help and completion scripts; for what scripts pass to `prefs`.
    let isHidden: Bool
    /// The command needs it: the parser fails without it, and usage shows
    /// it without brackets.
    let isRequired: Bool
    /// The value may be left out (`--wait` or `--wait 2s`): the next word
    /// is its value only when it starts with a digit; without one the value
    /// is empty.
    let valueIsOptional: Bool

    init(
        name: String, shortName: String? = nil, valueName: String?, help: String,
        completion: Completion, isHidden: Bool, isRequired: Bool = false,
        valueIsOptional: Bool = false
    ) {
        self.valueIsOptional = valueIsOptional
        self.name = name
        self.shortName = shortName
        self.valueName = valueName
        self.help = help
        self.completion = completion
        self.isHidden = isHidden
        self.isRequired = isRequired
    }

    var takesValue: Bool { valueName != nil }

    /// Every name the option answers to: the long one, then the short one.
    var names: [String] { [name] + (shortName.map { [$0] } ?? []) }

    /// How the option appears in a usage line: `--json`, `--format FORMAT`,
    /// `-n N` for one with a short name.
    var synopsis: String {
        let shown = shortName ?? name
        if valueIsOptional, let valueName { return "\(shown) [\(valueName)]" }
        return valueName.map { "\(shown) \($0)" } ?? shown
    }

    /// How the option appears in the list of options: as ``synopsis``, or
    /// `-n, --max-count N` for one with a short name.
    var helpSynopsis: String {
        let shown = shortName.map { "\($0), \(name)" } ?? name
        if valueIsOptional, let valueName { return "\(shown) [\(valueName)]" }
        return valueName.map { "\(shown) \($0)" } ?? shown
    }
}
