import Preferences

/// `prefs export [--format json|properties|plist]`.
enum ExportCommand {
    static let formats = ["json", "properties", "plist"]

    static func run(_ context: CommandContext) async throws {
        let format = context.invocation.value("--format") ?? "json"
        guard formats.contains(format) else {
            throw CommandFailure.usage(
                "unknown export format '\(format)' (use json, properties or plist)",
                usage: context.command)
        }
        let values = try await context.openStore().snapshot.values
        switch format {
        case "properties":
            context.output.standardOutput(PropertiesWriter.text(values))
        case "plist":
            let plist = try PropertyListWriter.text(values)
            for path in plist.omitted {
                context.output.warning(
                    "'\(path)' is null, which a property list cannot hold; left out")
            }
            context.output.standardOutput(plist.text)
        default:
            context.output.print(json(values))
        }
    }

    /// The values as one indented JSON object.
    static func json(_ values: [String: PreferenceValue]) -> String {
        PrettyJSON.text(.object(values))
    }
}
