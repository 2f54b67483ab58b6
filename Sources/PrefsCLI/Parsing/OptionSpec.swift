/// What the parser, the help text and the completion scripts know of one
/// option: its name, whether it takes a value, and what that value is.
///
/// Commands do not declare these directly: they declare a typed ``Flag``
/// or ``ValueOption``, which carries its spec.
struct OptionSpec: Sendable {
    /// The long name, with its dashes: `--format`.
    let name: String
    /// The placeholder shown in help (`FORMAT`); nil for a flag.
    let valueName: String?
    /// One line for `--help`.
    let help: String
    /// What a completion script offers for the value.
    let completion: Completion
    /// Left out of help and completion scripts; for what scripts pass to `prefs`.
    let isHidden: Bool

    var takesValue: Bool { valueName != nil }

    /// How the option appears in a synopsis: `--json`, `--format FORMAT`.
    var synopsis: String {
        valueName.map { "\(name) \($0)" } ?? name
    }
}
