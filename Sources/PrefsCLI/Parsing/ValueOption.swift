/// An option of `Owner` that takes a value, such as `--format FORMAT`;
/// read from ``ParsedOptions`` it is a `String?`: the value given last, or
/// nil when the option was not given.
///
/// `completing` says what completion scripts offer for the value; `short`
/// gives the option a second name of a dash and one letter, which usage
/// shows (`-n N`) and the parser takes as the long one; a `required` option
/// is one the command cannot run without (the parser says it is missing).
///
/// ```swift
/// static let format = ValueOption<ExportCommand>(
///     "--format", "FORMAT", help: "json (default), properties or plist.",
///     completing: .words(["json", "properties", "plist"]))
/// let format = parsed[Self.format]
/// ```
struct ValueOption<Owner: OptionOwner>: OptionDeclaration {
    let spec: OptionSpec

    init(
        _ name: String, _ valueName: String, short: String? = nil, help: String,
        completing: Completion = .nothing, hidden: Bool = false, required: Bool = false,
        optionalValue: Bool = false
    ) {
        spec = OptionSpec(
            name: name, shortName: short, valueName: valueName, help: help,
            completion: completing, isHidden: hidden, isRequired: required,
            valueIsOptional: optionalValue)
    }
}
