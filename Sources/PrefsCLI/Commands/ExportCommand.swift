import Preferences

/// `prefs export [--format json|properties|plist]`: the stored values in
/// another format, on standard output.
struct ExportCommand: PrefsCommand {
    /// What `export` writes.
    enum Format: String, CaseIterable {
        case json, properties, plist
    }

    static let name = "export"
    static let format = ValueOption<Self>(
        "--format", "FORMAT", help: "json (default), properties or plist.",
        completing: .words(Format.allCases.map(\.rawValue)))
    static let options: [any OptionDeclaration] = [format]
    static let help = CommandHelp(
        summary: "Print the stored values in another format.",
        discussion: """
            json prints one object of the values ('prefs import --format json' \
            reads it back). properties escapes as java.util.Properties.store \
            does, writing non-strings as JSON text. plist writes an XML property \
            list; null values, which a property list cannot hold, are left out \
            with a warning.
            """,
        examples: [
            ("export > backup.json", "saves the values"),
            ("export --format properties > app.properties", "for a Java program"),
        ])

    let format: Format

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        let name = parsed[Self.format] ?? Format.json.rawValue
        guard let format = Format(rawValue: name) else {
            throw .usage(
                "unknown export format '\(name)' (use json, properties or plist)", usage: Self.self)
        }
        self.format = format
    }

    func run(_ context: CommandContext) async throws {
        let values = try await context.openStore().snapshot.values
        switch format {
        case .properties:
            context.output.standardOutput(PropertiesWriter.text(values))
        case .plist:
            let plist = try PropertyListWriter.text(values)
            for path in plist.omitted {
                context.output.warning(
                    "'\(path)' is null, which a property list cannot hold; left out")
            }
            context.output.standardOutput(plist.text)
        case .json:
            context.output.print(Self.json(values))
        }
    }

    /// The values as one indented JSON object.
    static func json(_ values: [String: PreferenceValue]) -> String {
        PrettyJSON.text(.object(values))
    }
}
