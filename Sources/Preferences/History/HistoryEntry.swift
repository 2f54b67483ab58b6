#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One committed change of a store: its sequence number, who made it, when,
/// from where, and for each key it touched the value before and after
/// (H1, H2, <doc:HistoryAndUndo>).
///
/// ```swift
/// for entry in try await store.history(for: ["max_connections"]).entries.reversed() {
///     print(entry)   // #412 2026-12-02T03:12:09.120Z root (sudo from alice) via prefs: max_connections 100 → 1000
/// }
/// ```
///
/// An entry's JSON form is one object, as `prefs log --json` prints it and
/// the store keeps it:
///
/// ```json
/// {"sequence":412,"at":"2026-12-02T03:12:09.120Z","by":"root","sudo_user":"alice","program":"prefs","host":"web-1","changes":{"max_connections":{"old":100,"new":1000},"motd":{"old":"hi"}}}
/// ```
public struct HistoryEntry: Sendable, Hashable, CustomStringConvertible {
    /// A key's value before and after the change; nil where the key was not
    /// set (`old`) or was removed (`new`).
    ///
    /// A value whose JSON is over ``maxKeptValueBytes`` is kept by its size
    /// alone (``oldSize``, ``newSize``; `old_size`, `new_size` in JSON), so
    /// that a large value does not double a write; a change that would need
    /// it back cannot be reverted.
    public struct KeyChange: Sendable, Hashable {
        /// The value before the change; nil when the key was not set, or
        /// when the value was too large to keep (see ``oldSize``).
        public var old: PreferenceValue?
        /// The value after the change; nil when the change removed the key,
        /// or when the value was too large to keep (see ``newSize``).
        public var new: PreferenceValue?
        /// The size of the old value's JSON, when it was too large to keep.
        public var oldSize: Int?
        /// The size of the new value's JSON, when it was too large to keep.
        public var newSize: Int?
        /// Whether the key is a secret: then the entry records that it
        /// changed, never its values (A3, <doc:ChangingSettingsSafely>).
        public var secret = false

        /// A change from `old` to `new`.
        public init(old: PreferenceValue?, new: PreferenceValue?) {
            self.old = old
            self.new = new
        }

        /// The change of a secret key: that it changed, without its values.
        public static let secretChange: KeyChange = {
            var change = KeyChange(old: nil, new: nil)
            change.secret = true
            return change
        }()
    }

    /// The largest value, as JSON, that an entry keeps (16 KiB).
    public static let maxKeptValueBytes = 16 << 10

    /// The store's sequence number for this change: 1, 2, 3 … never reused
    /// nor skipped.
    public var sequence: Int64
    /// When the change was committed (UTC, to the millisecond).
    public var date: Date
    /// The effective user that made it (`root` under `sudo`).
    public var user: String
    /// The user who ran `sudo`, when the change was made through it.
    public var sudoUser: String?
    /// The program that made it, such as `prefs`.
    public var program: String
    /// The host the program ran on.
    public var host: String
    /// What made the change when it was not a plain edit: a migration step
    /// (`migration 'v2'`), an import (`import /etc/app.properties`), a
    /// revert or a restore.
    public var cause: String?
    /// The keys the change touched.
    public var changes: [String: KeyChange]
    /// The data version before and after, when the change moved it (a
    /// migration).
    public var versionChange: (old: Int, new: Int)? {
        get { versionOld.map { ($0, versionNew ?? $0) } }
        set {
            versionOld = newValue?.old
            versionNew = newValue?.new
        }
    }
    private var versionOld: Int?
    private var versionNew: Int?

    /// An entry, for tests and for building histories by hand.
    public init(
        sequence: Int64, date: Date, user: String, sudoUser: String? = nil, program: String,
        host: String, cause: String? = nil, changes: [String: KeyChange],
        versionChange: (old: Int, new: Int)? = nil
    ) {
        self.sequence = sequence
        self.date = date
        self.user = user
        self.sudoUser = sudoUser
        self.program = program
        self.host = host
        self.cause = cause
        self.changes = changes
        self.versionChange = versionChange
    }

    /// The keys the change touched, sorted by their bytes.
    public var keys: [String] { changes.keys.sorted(by: JSONText.precedesByBytes) }

    /// ``date`` in ISO 8601, UTC, with milliseconds.
    public var timestamp: String { Self.timestamp(date) }

    /// `root (sudo from alice)`, or just the user.
    public var userDescription: String {
        guard let sudoUser else { return user }
        return "\(user) (sudo from \(sudoUser))"
    }

    /// `#412 2026-12-02T03:12:09.120Z root (sudo from alice) via prefs: max_connections 100 → 1000`;
    /// a key that was not set reads `(unset)`.
    public var description: String {
        var text = "#\(sequence) \(timestamp) \(userDescription) via \(program)"
        if let cause { text += " (\(cause))" }
        let parts = keys.map { key in
            let change = changes[key]!
            if change.secret { return "\(key) <redacted> → <redacted>" }
            return
                "\(key) \(Self.shown(change.old, size: change.oldSize)) → \(Self.shown(change.new, size: change.newSize))"
        }
        if !parts.isEmpty { text += ": " + parts.joined(separator: ", ") }
        return text
    }

    static func shown(_ value: PreferenceValue?, size: Int? = nil) -> String {
        if let size { return "(\(size) bytes)" }
        return value.map { $0.jsonText } ?? "(unset)"
    }

    static func timestamp(_ date: Date) -> String {
        PreferenceModification(date: date, user: "", program: "").timestamp
    }

    // MARK: The stored form

    /// The entry as one JSON object (see the type's description): its
    /// ``jsonText``, parsed.
    public var jsonValue: PreferenceValue {
        // The text is valid JSON, at any depth: `.null` is never returned.
        (try? JSONText.parse(Array(jsonText.utf8), source: "history entry", maxDepth: .max))
            ?? .null
    }

    /// Reads an entry's JSON object; nil when it is not one.
    public init?(jsonValue: PreferenceValue) {
        guard case .object(let fields) = jsonValue,
            case .int(let sequence)? = fields["sequence"], sequence > 0,
            case .string(let at)? = fields["at"], let date = ISO8601.parse(at),
            case .string(let user)? = fields["by"],
            case .string(let program)? = fields["program"],
            case .object(let changed)? = fields["changes"]
        else { return nil }
        var changes: [String: KeyChange] = [:]
        for (key, value) in changed {
            guard case .object(let pair) = value else { return nil }
            var change = KeyChange(old: pair["old"], new: pair["new"])
            if case .int(let size)? = pair["old_size"] { change.oldSize = Int(clamping: size) }
            if case .int(let size)? = pair["new_size"] { change.newSize = Int(clamping: size) }
            change.secret = pair["secret"] == .bool(true)
            changes[key] = change
        }
        self.init(
            sequence: sequence, date: date, user: user, program: program,
            host: fields["host"].flatMap { if case .string(let host) = $0 { host } else { nil } }
                ?? "",
            changes: changes)
        if case .string(let name)? = fields["sudo_user"] { sudoUser = name }
        if case .string(let cause)? = fields["cause"] { self.cause = cause }
        if case .object(let version)? = fields["version"], case .int(let old)? = version["old"],
            case .int(let new)? = version["new"]
        {
            versionChange = (Int(old), Int(new))
        }
    }

    /// The entry as one line of compact JSON, as `prefs log --json` prints
    /// it: members in the order the type's description shows, changed keys
    /// sorted by their bytes, `old` before `new`.
    public var jsonText: String {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        func member(_ name: String, _ first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            JSONText.writeString(name, into: &out)
            out.append(UInt8(ascii: ":"))
        }
        out.append(UInt8(ascii: "{"))
        member("sequence", true)
        JSONText.writeInteger(sequence, into: &out)
        member("at")
        JSONText.writeString(timestamp, into: &out)
        member("by")
        JSONText.writeString(user, into: &out)
        if let sudoUser {
            member("sudo_user")
            JSONText.writeString(sudoUser, into: &out)
        }
        member("program")
        JSONText.writeString(program, into: &out)
        member("host")
        JSONText.writeString(host, into: &out)
        if let cause {
            member("cause")
            JSONText.writeString(cause, into: &out)
        }
        if let versionOld, let versionNew {
            member("version")
            out.append(contentsOf: #"{"old":"#.utf8)
            JSONText.writeInteger(Int64(versionOld), into: &out)
            out.append(contentsOf: #","new":"#.utf8)
            JSONText.writeInteger(Int64(versionNew), into: &out)
            out.append(UInt8(ascii: "}"))
        }
        member("changes")
        out.append(UInt8(ascii: "{"))
        for (index, key) in keys.enumerated() {
            let change = changes[key]!
            member(key, index == 0)
            out.append(UInt8(ascii: "{"))
            if let old = change.old {
                out.append(contentsOf: #""old":"#.utf8)
                JSONText.write(old, into: &out, pretty: false, indent: 0)
            }
            var comma = change.old != nil
            if let new = change.new {
                if comma { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #""new":"#.utf8)
                JSONText.write(new, into: &out, pretty: false, indent: 0)
                comma = true
            }
            for (name, size) in [("old_size", change.oldSize), ("new_size", change.newSize)] {
                guard let size else { continue }
                if comma { out.append(UInt8(ascii: ",")) }
                JSONText.writeString(name, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONText.writeInteger(Int64(size), into: &out)
                comma = true
            }
            if change.secret {
                if comma { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #""secret":true"#.utf8)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "}}".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads an entry from its JSON text; nil when it is not one.
    init?(jsonText bytes: [UInt8], source: String) {
        guard let value = try? JSONText.parse(bytes, source: source) else { return nil }
        self.init(jsonValue: value)
    }

    /// Whether the two entries are stored as the same text.
    public static func == (lhs: HistoryEntry, rhs: HistoryEntry) -> Bool {
        lhs.jsonText == rhs.jsonText
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sequence)
        hasher.combine(timestamp)
    }
}

extension HistoryEntry {
    /// The sequence of an entry's JSON text, read from its start
    /// (`{"sequence":412,…`, as entries are written), else parsed.
    static func sequence(ofJSONText line: [UInt8]) -> Int64? {
        let prefix = Array(#"{"sequence":"#.utf8)
        if line.starts(with: prefix) {
            var value: Int64 = 0
            var index = prefix.count
            while index < line.count, line[index] >= 0x30, line[index] <= 0x39 {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                if overflow { return nil }
                value = product + Int64(line[index] - 0x30)
                index += 1
            }
            if index > prefix.count { return value }
        }
        return HistoryEntry(jsonText: line, source: "")?.sequence
    }
}
