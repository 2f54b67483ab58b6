/// The arguments and options a command line gave one ``OptionOwner``,
/// read through the owner's typed declarations.
///
/// The subscripts take only `Owner`'s declarations: `parsed[Self.json]` in
/// `GetCommand` compiles, `parsed[ListCommand.defaults]` there does not, and
/// there is no lookup by name to mistype.
struct ParsedOptions<Owner: OptionOwner>: Sendable {
    /// Positional arguments after the command's name, in order.
    let arguments: [String]
    private let values: [String: String]
    private let flags: Set<String>

    init(arguments: [String], values: [String: String], flags: Set<String>) {
        self.arguments = arguments
        self.values = values
        self.flags = flags
    }

    /// Whether the flag was given.
    subscript(flag: Flag<Owner>) -> Bool {
        assertDeclared(flag.spec)
        return flags.contains(flag.spec.name)
    }

    /// The value given last, or nil when the option was not given.
    subscript(option: ValueOption<Owner>) -> String? {
        assertDeclared(option.spec)
        return values[option.spec.name]
    }

    /// A declaration missing from `Owner.options` is one the parser rejects,
    /// so reading it would always give false or nil.
    private func assertDeclared(_ spec: OptionSpec) {
        assert(
            Owner.option(named: spec.name) != nil,
            "\(spec.name) is not listed in \(Owner.self).options")
    }
}
