import Preferences

/// `prefs set KEY VALUE [--type TYPE]`.
///
/// The value's type comes from, in order (7.2 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md): `--type`; the
/// manifest's declaration of KEY; the type of the value stored now (a
/// string stays a string, a number stays the same kind of number); and for
/// a new key, inference from the text. A value that does not fit the
/// stored type exits with status 3 and says to pass `--type` to change the
/// type on purpose.
struct SetCommand: PrefsCommand {
    static let name = "set"
    static let arguments = CommandArguments("KEY VALUE", 2...2, completing: [.keys, .nothing])
    static let type = ValueOption<Self>(
        "--type", "TYPE",
        help: "Store VALUE as bool, int, double, string, json, date (ISO 8601) or data (base64).",
        completing: .words(PreferenceValueType.allCases.map(\.rawValue)))
    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let force = Flag<Self>(
        "--force",
        help:
            "Store VALUE even if another program's or a running replica's key manifest refuses it.")
    static let options: [any OptionDeclaration] = [type, wait, force]
    static let help = CommandHelp(
        summary: "Store a value.",
        discussion: """
            Without --type, VALUE takes the type the key manifest declares for KEY; \
            else the type of the value stored now (a string stays a string: over \
            "abc", 'set build 42' stores "42"), and a VALUE that does not fit it \
            exits with status 3 (pass --type to change the type); else, for a new \
            key, true and false are booleans, an integer literal is an int, a \
            decimal literal (1.5, 2e3) is a double and anything else is a string. \
            A declared value must also fit the key's range and allowed values. \
            The write is durable when the command returns, and running services \
            see it. Use -- before a VALUE that starts with a dash.
            """,
        examples: [
            ("set dark_mode true", "stores the boolean true"),
            ("set build 42 --type string", "stores the string \"42\""),
            ("set servers '[\"a\",\"b\"]' --type json", "stores an array"),
            ("set last_sync 2026-03-01T09:30:00Z --type date", "stores a date"),
            ("set motto -- --never-give-up", "stores a string starting with dashes"),
            ("set greeting Bonjour --wait 5s", "waits until every running replica has it"),
        ])

    let key: String
    let text: String
    let type: PreferenceValueType?
    let wait: Duration?
    let force: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        key = parsed.arguments[0]
        text = parsed.arguments[1]
        wait = try ReplicaWait.timeout(parsed[Self.wait])
        force = parsed[Self.force]
        guard let typeName = parsed[Self.type] else {
            type = nil
            return
        }
        guard let type = PreferenceValueType(rawValue: typeName) else {
            let names = PreferenceValueType.allCases.map(\.rawValue).joined(separator: ", ")
            throw .usage("unknown type '\(typeName)' (use \(names))", usage: Self.self)
        }
        self.type = type
    }

    func run(_ context: CommandContext) async throws {
        let explicit: PreferenceValue?
        if let type {
            let value = try type.parse(text, forKey: key)
            try context.validate(value, forKey: key)
            explicit = value
        } else if let manifest = context.manifest, manifest[key] != nil {
            explicit = try manifest.parse(text, forKey: key)
        } else {
            explicit = nil
        }
        let store = try await context.openStore()
        let (key, text) = (key, text)
        let programs = force ? [:] : context.programManifests
        let replicas = force ? nil : store.storage
        try await store.edit { preferences in
            // The stored type is read under the lock, from the state the write replaces.
            let value = try explicit ?? Self.value(text, key: key, stored: preferences[raw: key])
            if let problem = PreferencesManifest.refusal(of: value, forKey: key, by: programs) {
                throw CommandFailure(.invalidValue, problem.message)
            }
            if let replicas { try ReplicaGuard.check([key: value], storage: replicas) }
            preferences[raw: key] = value
        }
        try await ReplicaWait.afterWrite(store, timeout: wait, output: context.output)
    }

    /// `text` as the type of `stored`, or inferred when nothing is stored.
    static func value(_ text: String, key: String, stored: PreferenceValue?) throws
        -> PreferenceValue
    {
        guard let stored, stored != .null else {
            return try PreferenceValueType.inferred(from: text).parse(text, forKey: key)
        }
        let type = PreferenceValueType(kindOf: stored)
        do {
            return try type.parse(text, forKey: key)
        } catch let error as PreferencesError {
            guard case .invalidValue(_, let reason) = error else { throw error }
            throw CommandFailure(
                .invalidValue,
                "invalid value for key '\(key)': \(reason); it holds \(stored.typeDescription) "
                    + "now (pass --type to store another type)")
        }
    }
}
