import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
            many were skipped. With a key manifest, values of declared keys are \
            converted to their declared type as a migration converts them, and \
            a value that does not fit imports nothing (status 3). A null is no \
            value: its key is not imported.
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
        let declared = context.manifest?.entries.mapValues { ValueConversion($0.type) } ?? [:]
        let legacyImport = LegacyImport(
            format, at: source, encoding: encoding, keys: .prefix(prefix),
            types: KeyTypes(declared), conflicts: overwrite ? .overwrite : .keepStored)
        let store = try await context.openStore()
        for key in context.secrets.keys {  // so that a message quoting one is scrubbed
            if let value = contents.values[key] { context.secrets.remember(value, forKey: key) }
        }
        let manifests = [context.manifest].compactMap { $0 } + context.programManifests.values
        let (imported, kept) = try await store.edit { preferences in
            preferences.attribute(to: legacyImport.name)
            do {
                let outcome = try legacyImport.importValues(contents, into: &preferences)
                // Only declared keys can be refused; the first in byte order is named.
                let refused = outcome.imported.filter { key, value in
                    manifests.contains { $0[key] != nil }
                        && (try? context.validate(value, forKey: key)) == nil
                }
                for key in refused.keys.sortedByBytes() {
                    try context.validate(refused[key]!, forKey: key)
                }
                return (outcome.imported.count, outcome.kept.count)
            } catch let error as PreferencesError {
                // A key or value the store cannot take, from a file read whole: not status 4.
                throw CommandFailure(.invalidValue, error.description)
            } catch let failure as CommandFailure {
                throw CommandFailure(failure.status, "\(source.path): \(failure.message)")
            }
        }
        var summary = "imported \(imported) \(imported == 1 ? "key" : "keys") from \(source.path)"
        if kept > 0 {
            summary += "; kept \(kept) already stored (use --overwrite to replace them)"
        }
        context.output.print(summary)
    }
}
