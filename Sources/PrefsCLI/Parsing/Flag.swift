/// An option of `Owner` that takes no value, such as `--json`; read from
/// ``ParsedOptions`` it is a `Bool`: whether it was given.
///
/// ```swift
/// static let json = Flag<GetCommand>("--json", help: "Print the value as JSON.")
/// let json = parsed[Self.json]
/// ```
struct Flag<Owner: OptionOwner>: OptionDeclaration {
    let spec: OptionSpec

    /// A `hidden` flag is left out of help, the manual page and the
    /// completion scripts.
    init(_ name: String, help: String, hidden: Bool = false) {
        spec = OptionSpec(
            name: name, valueName: nil, help: help, completion: .nothing, isHidden: hidden)
    }
}
