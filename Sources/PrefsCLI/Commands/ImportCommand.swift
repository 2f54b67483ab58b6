import Foundation
import Preferences

/// `prefs import PATH --format FORMAT [--encoding E] [--prefix P] [--overwrite]`.
///
/// The legacy file is read completely before the store is touched; the
/// selected keys are then written in one atomic edit, decided on the state
/// re-read under the store's lock, so a key stored meanwhile by another
/// process is still kept unless `--overwrite` is given.
struct ImportCommand: PrefsCommand {
    static let name = "import"
    static let arguments = CommandArguments("PATH", 1...1, completing: [.files])
    static let format = ValueOption<Self>(
        "--format", "FORMAT", help: "properties, shared-prefs, plist, envdir or json (required).",
        completing: .words(LegacyFormat.allCases.map(\.rawValue)))
    static let encoding = ValueOption<Self>(
        "--encoding", "ENCODING",
        help: "For properties: utf-8 (default) or iso-8859-1 (as Properties.load(InputStream)).",
        completing: .words(["utf-8", "iso-8859-1"]))
    static let prefix = ValueOption<Self>(
        "--prefix", "P", help: "Import only the keys that start with P.")
    static let overwrite = Flag<Self>(
        "--overwrite", help: "Replace keys that are already stored (default: keep them).")
    static let options: [any OptionDeclaration] = [format, encoding, prefix, overwrite]
    static let help = CommandHelp(
        summary: "Import a legacy settings file in one atomic write.",
        discussion: """
            Reads the whole file first: a malformed file imports nothing and \
            exits with status 4, naming the file and line. Keys already stored \
            are kept unless --overwrite is given; the summary line says how \
            many were skipped. With a key manifest, string values of declared keys \
            are converted to the declared type, and every imported value must \
            fit its declaration.
            """,
        examples: [
            ("import app.properties --format properties", "imports every key"),
            (
                "import prefs.xml --format shared-prefs --prefix sync. --overwrite",
                "imports the sync.* keys, replacing stored ones"
            ),
            ("import legacy.properties --format properties --encoding iso-8859-1", "Latin-1 file"),
        ])

    let source: URL
    let format: LegacyFormat
    let encoding: PropertiesEncoding
    let prefix: String
    let overwrite: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        guard let formatName = parsed[Self.format] else {
            throw .usage("missing --format", usage: Self.self)
        }
        guard let format = LegacyFormat(rawValue: formatName) else {
            let names = LegacyFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw .usage("unknown import format '\(formatName)' (use \(names))", usage: Self.self)
        }
        var encoding = PropertiesEncoding.utf8
        if let encodingName = parsed[Self.encoding] {
            guard format == .properties else {
                throw .usage("--encoding applies to --format properties only", usage: Self.self)
            }
            guard let chosen = PropertiesEncoding(rawValue: encodingName) else {
                throw .usage(
                    "unknown encoding '\(encodingName)' (use utf-8 or iso-8859-1)",
                    usage: Self.self)
            }
            encoding = chosen
        }
        self.format = format
        self.encoding = encoding
        prefix = parsed[Self.prefix] ?? ""
        overwrite = parsed[Self.overwrite]
        source = URL(fileURLWithPath: parsed.arguments[0])
    }

    func run(_ context: CommandContext) async throws {
        let contents = try LegacyReader.read(format, at: source, encoding: encoding)
        for warning in contents.warnings { context.output.warning(warning) }
        var chosen = contents.values.filter { $0.key.hasPrefix(prefix) }
        if let manifest = context.manifest {
            chosen = try Self.typed(chosen, by: manifest, context: context)
        }
        let selected = chosen

        let store = try await context.openStore()
        let (imported, skipped) = try await store.edit { preferences in
            // Into an empty store, or with --overwrite, every key goes in as
            // it is, in one step; otherwise the keys already stored stay.
            var added = selected
            if !overwrite && !preferences.values.isEmpty {
                added = selected.filter { preferences[raw: $0.key] == nil }
            }
            try preferences.merge(added)
            return (added.count, selected.count - added.count)
        }
        var summary = "imported \(imported) \(imported == 1 ? "key" : "keys") from \(source.path)"
        if skipped > 0 {
            summary += "; kept \(skipped) already stored (use --overwrite to replace them)"
        }
        context.output.print(summary)
    }

    /// Strings of declared keys converted to their declared types (as an
    /// import migration does: "Importing an old settings file" in
    /// Sources/Preferences/Preferences.docc/MigratingAtStartUp.md), then
    /// every value checked against its declaration.
    static func typed(
        _ values: [String: PreferenceValue], by manifest: PreferencesManifest,
        context: CommandContext
    ) throws -> [String: PreferenceValue] {
        var typed = values
        for key in values.keys.sortedByBytes() {
            guard let entry = manifest[key], var value = values[key] else { continue }
            if case .string(let text) = value, entry.type != .string {
                value = try entry.type.parse(text, forKey: key)
            }
            try context.validate(value, forKey: key)
            typed[key] = value
        }
        return typed
    }
}
