import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `prefs set KEY VALUE [--type TYPE]`.
///
/// The value's type comes from, in order (7.2 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md): `--type`; the
/// manifest's declaration of KEY; the type of the value stored now (a
/// string stays a string, a number stays the same kind of number); and for
/// a new key, inference from the text. A value that does not fit the
/// stored type exits with status 3 and says to pass `--type` to change the
/// type on purpose.
///
/// `--for DURATION` makes the change temporary (A4 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md): the key
/// reads VALUE until then, and afterwards what it read before, by itself.
/// DURATION is ``DurationText``'s grammar; one it does not take is a usage
/// error (status 2) and nothing is written.
struct SetCommand: PrefsCommand {
    static let name = "set"
    static let arguments = CommandArguments("KEY VALUE", 2...2, completing: [.keys, .nothing])
    static let type = ValueOption<Self>(
        "--type", "TYPE",
        help: "Store VALUE as bool, int, double, string, json, date (ISO 8601) or data (base64).",
        completing: .words(PreferenceValueType.allCases.map(\.rawValue)))
    static let duration = ValueOption<Self>(
        "--for", "DURATION",
        help: "Only for DURATION (30s, 15m, 2h, 1h30m); then the key reads as before.")
    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let force = Flag<Self>(
        "--force",
        help:
            "Store VALUE even if another program's or a running replica's key manifest refuses it.")
    static let options: [any OptionDeclaration] = [type, duration, wait, force]
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
            see it. Use -- before a VALUE that starts with a dash. With --for \
            DURATION the change is temporary: once DURATION has passed, the key \
            reads as it did before (its earlier value, or unset) with no write and \
            no process running; 'prefs get --long' shows when it ends, and an \
            ordinary 'prefs set' of the key ends it early. DURATION is whole \
            numbers each followed by h, m or s, in that order (30s, 15m, 2h, \
            1h30m), longer than zero and at most a year; anything else exits with \
            status 2 and writes nothing.
            """,
        examples: [
            ("set dark_mode true", "stores the boolean true"),
            ("set build 42 --type string", "stores the string \"42\""),
            ("set servers '[\"a\",\"b\"]' --type json", "stores an array"),
            ("set last_sync 2026-03-01T09:30:00Z --type date", "stores a date"),
            ("set motto -- --never-give-up", "stores a string starting with dashes"),
            ("set log_level debug --for 30m", "debug for half an hour, then as before"),
            ("set greeting Bonjour --wait 5s", "waits until every running replica has it"),
        ])

    let key: String
    let text: String
    let type: PreferenceValueType?
    /// With `--for`: how many seconds the value holds.
    let seconds: Int64?
    let wait: Duration?
    let force: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        key = parsed.arguments[0]
        text = parsed.arguments[1]
        if let duration = parsed[Self.duration] {
            switch DurationText.seconds(duration) {
            case .success(let seconds): self.seconds = seconds
            case .failure(let problem):
                throw .usage(
                    "invalid \(Self.duration.spec.name) '\(duration)' (\(problem.reason))",
                    usage: Self.self)
            }
        } else {
            seconds = nil
        }
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
        context.secrets.remember(text: text, forKey: key)
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
            if let seconds {
                // As store.set(_:_:for:) does, for a key known by its name.
                let until = Date(timeIntervalSinceNow: TimeInterval(seconds))
                preferences.set(raw: key, value, until: until)
            } else {
                preferences[raw: key] = value
            }
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
