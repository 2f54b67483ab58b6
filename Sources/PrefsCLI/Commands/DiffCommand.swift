import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `prefs diff FILE [--prune]`: how the store differs from the values FILE
/// holds (its row in the commands table, and 7.3, in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
///
/// Prints one `KEY: OLD → NEW` line for each key whose stored value is not
/// the one in FILE, sorted by key bytes, and exits with status 0 when there
/// is none and 1 when there is one at least, as `diff(1)` and `git diff
/// --exit-code` do; errors keep their statuses (2 usage, 4 a FILE or store
/// that is not valid, 5 I/O). Writes nothing.
struct DiffCommand: PrefsCommand {
    static let name = "diff"
    static let arguments = CommandArguments("FILE", 1...1, completing: [.files])
    static let prune = Flag<Self>(
        "--prune", help: "Also show the stored keys FILE does not name, as removed.")
    static let options: [any OptionDeclaration] = [prune]
    static let help = CommandHelp(
        summary: "Show how the store differs from the values in a file.",
        discussion: """
            FILE holds the values the store should hold: a JSON object of key → \
            value, or a whole store file (an object with "format" and "values"; \
            its values are taken). Prints 'KEY: OLD → NEW' for each key whose \
            stored value differs, sorted by key (values as compact JSON, (unset) \
            for a key that is not set or would be removed), and writes nothing. \
            Keys FILE does not name are left out unless --prune is given, as \
            'prefs apply' leaves them alone. Exits with status 0 when there is \
            no difference and 1 when there is, as diff(1) and 'git diff \
            --exit-code' do; 2 and up are errors: a FILE that is not JSON or not \
            an object is status 4, naming the file, line and column. The values \
            of secret keys are shown as <redacted> unless --reveal is given.
            """,
        examples: [
            ("diff desired.json", "prints: max_connections: 100 → 1000"),
            ("diff desired.json --prune", "also the stored keys the file does not name"),
            (
                "--etcd http://etcd-1:2379 --suite app diff desired.json > /dev/null",
                "status 1: the suite in etcd has drifted from the file"
            ),
        ])

    let file: URL
    let prune: Bool

    init(_ parsed: ParsedOptions<Self>) {
        file = URL(fileURLWithPath: parsed.arguments[0])
        prune = parsed[Self.prune]
    }

    func run(_ context: CommandContext) async throws {
        let desired = try Self.desiredValues(in: file)
        let store = try await context.openStore()
        let difference = store.difference(to: desired, prune: prune)
        Self.print(difference, to: context)
        if !difference.isEmpty { throw CommandExit(status: .differences) }
    }

    /// Prints the difference's `KEY: OLD → NEW` lines, if any, secret
    /// values as `<redacted>` unless `--reveal`.
    static func print(_ difference: PreferencesDifference, to context: CommandContext) {
        for (key, change) in difference.changes {
            for value in [change.old, change.new] {
                if let value { context.secrets.remember(value, forKey: key) }
            }
        }
        let lines = context.secrets.lines(difference)
        if !lines.isEmpty { context.output.standardOutput(lines.map { $0 + "\n" }.joined()) }
    }

    /// The values FILE holds: its JSON object, or the `values` of a store
    /// file (an object with both `format` and `values`).
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   (status 4) naming the file, and the line and column of a syntax
    ///   error, when FILE is not a JSON object or a store file of another
    ///   format; ``PreferencesError/io(operation:path:code:message:)``
    ///   (status 5) when it cannot be read.
    static func desiredValues(in file: URL) throws -> [String: PreferenceValue] {
        let object = try LegacyReader.read(.json, at: file).values
        guard let format = object["format"], let values = object["values"] else { return object }
        guard format == .int(1) else {
            throw PreferencesError.legacyFormat(
                file: file.path, line: nil, column: nil,
                reason:
                    "a store file of unknown format \(format.jsonText) (this version reads format 1)"
            )
        }
        guard case .object(let stored) = values else {
            throw PreferencesError.legacyFormat(
                file: file.path, line: nil, column: nil,
                reason: "a store file whose \"values\" is \(values.typeDescription), not an object")
        }
        return stored
    }
}
