/// An option of `Owner` that takes a value, such as `--format FORMAT`;
/// read from ``ParsedOptions`` it is a `String?`: the value given last, or
/// nil when the option was not given.
///
/// `completing` says what completion scripts offer for the value.
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
        _ name: String, _ valueName: String, help: String, completing: Completion = .nothing,
        hidden: Bool = false
    ) {
        spec = OptionSpec(
            name: name, valueName: valueName, help: help, completion: completing,
            isHidden: hidden)
    }
}
