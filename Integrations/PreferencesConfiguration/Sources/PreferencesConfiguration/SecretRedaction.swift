import Preferences

/// Takes secret values out of text that leaves the provider (log lines,
/// errors): every spelling of a secret's value that the text could quote
/// becomes `<redacted>`.
struct SecretRedaction: Sendable {
    /// What a secret's value is replaced with.
    static let placeholder = "<redacted>"

    private var spellings: [String] = []

    /// A redaction of the values of `secrets`, read with `read`, and of `extra` values.
    init(
        secrets: some Sequence<String>, read: (String) -> PreferenceValue?,
        extra: [PreferenceValue] = []
    ) {
        var values = extra
        for key in secrets {
            if let value = read(key) { values.append(value) }
        }
        var spellings: Set<String> = []
        for value in values { Self.collect(value, into: &spellings) }
        // Longest first, so a value that contains another goes whole.
        self.spellings = spellings.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// The value's JSON, and each string it holds as it is.
    private static func collect(_ value: PreferenceValue, into spellings: inout Set<String>) {
        spellings.insert(value.jsonText)
        switch value {
        case .string(let text): spellings.insert(text)
        case .array(let items): for item in items { collect(item, into: &spellings) }
        case .object(let fields): for field in fields.values { collect(field, into: &spellings) }
        default: break
        }
    }

    /// `text` with every secret value replaced.
    func scrub(_ text: String) -> String {
        var text = text
        for spelling in spellings where text.contains(spelling) {
            text = text.replacing(spelling, with: Self.placeholder)
        }
        return text
    }
}
