import Preferences

/// How `prefs` shows the values of secret keys: as `<redacted>`, in every
/// output and message, unless `--reveal` was given; only `prefs get KEY`
/// prints one, since asking for one key by name is explicit (A3 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md).
///
/// The secret keys are those a manifest in force declares `"secret": true`
/// and those the store's document lists. The values those keys hold, and
/// any value given for one on the command line, are remembered, so an
/// error message that quotes one (a value the manifest refuses) is
/// scrubbed before it is printed.
final class SecretRedaction: Sendable {
    /// What is shown in place of a secret value.
    static let marker = "<redacted>"

    /// `--reveal`: show secrets everywhere.
    let reveal: Bool
    private let state: Locked<State>

    private struct State {
        var keys: Set<String>
        /// Values seen for each key: given on the command line, or stored.
        var texts: [String: Set<String>] = [:]
        /// Whether the store's document has been read for its secret keys.
        var readStore = false
    }

    init(keys: Set<String>, reveal: Bool) {
        self.reveal = reveal
        state = Locked(State(keys: keys))
    }

    /// Whether a value was given before the store was read: its document
    /// may list more secret keys, and a message may quote a value stored
    /// for one, so the store is read before a failure is printed (see
    /// ``CommandContext/scrubbed(_:)``).
    var needsStore: Bool {
        state.withLock { !$0.readStore && !$0.texts.isEmpty }
    }

    /// The secret keys known so far.
    var keys: Set<String> { state.withLock { $0.keys } }

    /// Whether `key`'s value is shown as ``marker``.
    func hides(_ key: String) -> Bool {
        !reveal && state.withLock { $0.keys.contains(key) }
    }

    /// Adds the keys the snapshot's document lists as secret, and remembers
    /// the values every secret key holds there (now and after a temporary
    /// value ends).
    func learn(_ snapshot: PreferencesSnapshot) {
        state.withLock { state in
            state.readStore = true
            state.keys.formUnion(snapshot.secretKeys)
            for key in state.keys {
                for value in [snapshot.values[key], snapshot.valueAfterTemporary(forKey: key)] {
                    if let value { state.texts[key, default: []].formUnion(Self.texts(of: value)) }
                }
            }
        }
    }

    /// Remembers `value` as one to scrub from messages if `key` is secret.
    func remember(_ value: PreferenceValue, forKey key: String) {
        state.withLock { $0.texts[key, default: []].formUnion(Self.texts(of: value)) }
    }

    /// Remembers the text given for `key` on the command line when `key` is secret.
    func remember(text: String, forKey key: String) {
        remember(.string(text), forKey: key)
    }

    /// `value`, or the string ``marker`` when `key` is hidden.
    func shown(_ value: PreferenceValue, forKey key: String) -> PreferenceValue {
        hides(key) ? .string(Self.marker) : value
    }

    /// `values` with each hidden key's value replaced by the string ``marker``.
    func shown(_ values: [String: PreferenceValue]) -> [String: PreferenceValue] {
        var shown = values
        for key in values.keys where hides(key) { shown[key] = .string(Self.marker) }
        return shown
    }

    /// A value as a line shows it: compact JSON, `(unset)` for nil, or
    /// ``marker`` (without quotes) for a hidden key.
    func text(_ value: PreferenceValue?, forKey key: String) -> String {
        guard let value else { return "(unset)" }
        return hides(key) ? Self.marker : value.jsonText
    }

    /// `KEY: OLD → NEW` lines, as `PreferencesDifference.lines` writes them,
    /// with hidden values as ``marker``.
    func lines(_ difference: PreferencesDifference) -> [String] {
        difference.keys.map { key in
            let change = difference.changes[key]!
            return "\(key): \(text(change.old, forKey: key)) → \(text(change.new, forKey: key))"
        }
    }

    /// `entry` with the changes of hidden keys recorded as a secret's are:
    /// that the key changed, not to what (for an entry written before the
    /// key was declared secret).
    func shown(_ entry: HistoryEntry) -> HistoryEntry {
        var shown = entry
        for key in entry.changes.keys where hides(key) {
            shown.changes[key] = .secretChange
        }
        return shown
    }

    /// `message` with every remembered secret value replaced by ``marker``.
    func scrub(_ message: String) -> String {
        guard !reveal else { return message }
        let texts = state.withLock { state in
            state.keys.reduce(into: Set<String>()) { $0.formUnion(state.texts[$1] ?? []) }
        }
        // Longest first, so a quoted value goes before the text inside it.
        return texts.sorted { $0.count > $1.count }.reduce(message) { message, text in
            message.replacing(text, with: Self.marker)
        }
    }

    /// The ways a message may quote `value`: its JSON text, and a string's
    /// characters as they are.
    private static func texts(of value: PreferenceValue) -> Set<String> {
        var texts: Set<String> = [value.jsonText]
        if case .string(let text) = value { texts.insert(text) }
        return texts.filter { !$0.isEmpty }
    }
}
