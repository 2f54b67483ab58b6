/// One entry of the file's `modified` member as it is stored: the texts,
/// kept as read, so that opening a large store parses no dates and a write
/// copies the records of unchanged keys without formatting them again.
/// ``PreferenceModification`` is its parsed, public form.
struct ChangeRecord: Sendable, Hashable {
    var at: String
    var by: String
    var program: String
    var sudoUser: String?

    init(_ modification: PreferenceModification) {
        at = modification.timestamp
        by = modification.user
        program = modification.program
        sudoUser = modification.sudoUser
    }

    /// Reads a stored entry; nil when it is not one (an entry that does not
    /// parse is dropped, never an error: it must not cost a value).
    init?(storedValue: PreferenceValue) {
        guard case .object(let fields) = storedValue,
            case .string(let at)? = fields["at"],
            case .string(let by)? = fields["by"],
            case .string(let program)? = fields["program"]
        else { return nil }
        (self.at, self.by, self.program) = (at, by, program)
        if case .string(let name)? = fields["sudo_user"] { sudoUser = name }
    }

    /// Reads a stored entry from its members in the order of the text, as
    /// ``init(storedValue:)`` reads the object they make (where the last
    /// of a repeated name counts), without making that object.
    init?(members: [(key: String, value: PreferenceValue)]) {
        var at: PreferenceValue?
        var by: PreferenceValue?
        var program: PreferenceValue?
        var sudoUser: PreferenceValue?
        for (key, value) in members {
            switch key {
            case "at": at = value
            case "by": by = value
            case "program": program = value
            case "sudo_user": sudoUser = value
            default: continue
            }
        }
        guard case .string(let at)? = at, case .string(let by)? = by,
            case .string(let program)? = program
        else { return nil }
        (self.at, self.by, self.program) = (at, by, program)
        if case .string(let name)? = sudoUser { self.sudoUser = name }
    }

    var storedValue: PreferenceValue {
        var fields: [String: PreferenceValue] = [
            "at": .string(at), "by": .string(by), "program": .string(program),
        ]
        fields["sudo_user"] = sudoUser.map(PreferenceValue.string)
        return .object(fields)
    }

    /// Writes ``storedValue`` as the file has it, as a member of `modified`
    /// (pretty-printed at indent 2).
    func write(into out: inout [UInt8]) {
        JSONText.write(storedValue, into: &out, pretty: true, indent: 2)
    }

    /// The public form; nil when `at` is not an ISO 8601 time.
    var modification: PreferenceModification? {
        guard let date = ISO8601.parse(at) else { return nil }
        return PreferenceModification(date: date, user: by, sudoUser: sudoUser, program: program)
    }
}
