/// An option of `Owner` that takes no value, such as `--json`; read from
/// ``ParsedOptions`` it is a `Bool`: whether it was given.
///
/// ```swift
/// static let json = Flag<GetCommand>("--json", help: "Print the value as JSON.")
/// let json = parsed[Self.json]
/// ```
struct Flag<Owner: OptionOwner>: OptionDeclaration {
    let spec: OptionSpec

    init(_ name: String, help: String) {
        spec = OptionSpec(
            name: name, valueName: nil, help: help, completion: .nothing, isHidden: false)
    }
}
