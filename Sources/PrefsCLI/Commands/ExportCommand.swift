import Preferences

/// `prefs export [--format json|properties|plist]`: the stored values in
/// another format, on standard output, written by the library's
/// ``PreferencesExport``.
struct ExportCommand: PrefsCommand {
    typealias Format = PreferencesExport.Format

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
            with a warning. The values of secret keys are written as \
            "<redacted>" unless --reveal is given.
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
        let snapshot = try await context.openStore().snapshot
        let export: PreferencesExport
        do {
            export = try PreferencesExport(context.secrets.shown(snapshot.values), as: format)
        } catch PreferencesError.invalidValue(let key, let reason) {
            // "key 'bell' holds control character U+7, …", as before the
            // writers moved to the library.
            throw CommandFailure(.invalidValue, "key '\(key)' \(reason)")
        }
        for warning in export.warnings { context.output.warning(warning) }
        context.output.standardOutput(export.text)
    }

    /// The values as one indented JSON object, without a final newline
    /// (for `list --json`).
    static func json(_ values: [String: PreferenceValue]) -> String {
        // Only a property list refuses values: JSON takes every value.
        let export = try? PreferencesExport(values, as: .json)
        return String(export?.text.dropLast() ?? "")
    }
}
