import Foundation
import Preferences

/// `prefs import PATH --format FORMAT [--encoding E] [--prefix P] [--overwrite]`.
///
/// The legacy file is read completely before the store is touched; the
/// selected keys are then written in one atomic edit, decided on the state
/// re-read under the store's lock, so a key stored meanwhile by another
/// process is still kept unless `--overwrite` is given.
enum ImportCommand {
    static func run(_ context: CommandContext) async throws {
        let invocation = context.invocation
        guard let formatName = invocation.value("--format") else {
            throw CommandFailure.usage("missing --format", usage: context.command)
        }
        guard let format = LegacyFormat(rawValue: formatName) else {
            let names = LegacyFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw CommandFailure.usage(
                "unknown import format '\(formatName)' (use \(names))", usage: context.command)
        }
        var encoding = PropertiesEncoding.utf8
        if let encodingName = invocation.value("--encoding") {
            guard format == .properties else {
                throw CommandFailure.usage(
                    "--encoding applies to --format properties only", usage: context.command)
            }
            guard let chosen = PropertiesEncoding(rawValue: encodingName) else {
                throw CommandFailure.usage(
                    "unknown encoding '\(encodingName)' (use utf-8 or iso-8859-1)",
                    usage: context.command)
            }
            encoding = chosen
        }
        let prefix = invocation.value("--prefix") ?? ""
        let overwrite = invocation.has("--overwrite")
        let source = URL(fileURLWithPath: context.argument(0))

        let contents = try LegacyReader.read(format, at: source, encoding: encoding)
        for warning in contents.warnings { context.output.warning(warning) }
        var chosen = contents.values.filter { $0.key.hasPrefix(prefix) }
        if let manifest = context.manifest {
            chosen = try typed(chosen, by: manifest, context: context)
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
