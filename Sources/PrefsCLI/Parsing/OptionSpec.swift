/// One option a command (or the tool as a whole) accepts.
///
/// An option with a `valueName` takes a value (`--format json` or
/// `--format=json`); one without is a flag (`--json`).
struct OptionSpec: Sendable {
    /// The long name, with its dashes: `--format`.
    let name: String
    /// The placeholder shown in help (`FORMAT`); nil for a flag.
    let valueName: String?
    /// One line for `--help`.
    let help: String

    var takesValue: Bool { valueName != nil }

    /// How the option appears in a synopsis: `--json`, `--format FORMAT`.
    var synopsis: String {
        valueName.map { "\(name) \($0)" } ?? name
    }

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }

    static func value(_ name: String, _ valueName: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help)
    }
}
