/// The preferences file layout (SPEC §5): a JSON object with the layout's
/// `format` (1), the app's data `version` (0 when absent), the stored
/// `values`, and for each stored key when and by whom it was last changed
/// (`modified`, S18).
///
/// ```json
/// {
///   "format" : 1,
///   "modified" : {
///     "dark_mode" : { "at" : "2026-12-01T09:30:12.345Z", "by" : "alice", "program" : "prefs" }
///   },
///   "values" : {
///     "dark_mode" : true
///   },
///   "version" : 2
/// }
/// ```
///
/// Top-level members this version does not know are kept as they are and
/// written back unchanged, as records keep fields they do not declare (R3),
/// so a later addition to the layout never makes a file unreadable to an
/// older reader, and an older writer never drops it.
struct StoreDocument: Sendable, Equatable {
    static let currentFormat: Int64 = 1
    static let knownMembers: Set<String> = ["format", "modified", "values", "version"]

    var values: [String: PreferenceValue]
    var version: Int
    /// When and by whom each stored key was last changed; only stored keys have one.
    var modifications: ChangeLog
    /// Top-level members this version does not know, kept for writing back.
    var otherMembers: [String: PreferenceValue]

    init(
        values: [String: PreferenceValue] = [:], version: Int = 0,
        modifications: ChangeLog = ChangeLog(),
        otherMembers: [String: PreferenceValue] = [:]
    ) {
        self.values = values
        self.version = version
        self.modifications = modifications
        self.otherMembers = otherMembers
    }

    /// The document an edit of `base` writes: `values` and `version`, with
    /// `stamp` on every key whose value changed, the earlier records of the
    /// keys that did not, none for removed keys, and `base`'s other members.
    init(
        editing base: PreferencesSnapshot, values: [String: PreferenceValue], version: Int,
        stamp: PreferenceModification
    ) {
        let modifications = ChangeLog(
            editing: base.modifications, baseValues: base.values, values: values,
            stamp: ChangeRecord(stamp))
        self.init(
            values: values, version: version, modifications: modifications,
            otherMembers: base.otherMembers)
    }

    /// Reads a file's bytes; every problem is ``PreferencesError/corrupted(file:reason:)``.
    static func decode(_ bytes: [UInt8], file: String, limits: PreferencesLimits) throws
        -> StoreDocument
    {
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.corrupted(
                file: file,
                reason: "file is \(bytes.count) bytes, over the limit of \(limits.maxFileSize)")
        }
        if bytes.isEmpty {
            throw PreferencesError.corrupted(file: file, reason: "the file is empty")
        }
        let root: PreferenceValue
        do {
            // The envelope and `values` add two levels above the stored values.
            root = try JSONText.parse(bytes, source: file, maxDepth: limits.maxDepth + 2)
        } catch PreferencesError.corrupted(_, let reason) {
            throw PreferencesError.corrupted(file: file, reason: "not valid JSON: \(reason)")
        }
        guard case .object(let fields) = root else {
            throw PreferencesError.corrupted(
                file: file,
                reason: "expected a JSON object at the top, found \(root.typeDescription)")
        }
        guard let format = fields["format"] else {
            throw PreferencesError.corrupted(file: file, reason: "missing the \"format\" field")
        }
        guard format == .int(currentFormat) else {
            throw PreferencesError.corrupted(
                file: file,
                reason:
                    "unknown format \(format.jsonText) (this version reads format \(currentFormat))"
            )
        }
        var version = 0
        if let stored = fields["version"] {
            guard case .int(let number) = stored, number >= 0, let value = Int(exactly: number)
            else {
                throw PreferencesError.corrupted(
                    file: file,
                    reason: "\"version\" must be a non-negative integer, found \(stored.jsonText)")
            }
            version = value
        }
        guard case .object(let values)? = fields["values"] else {
            throw PreferencesError.corrupted(
                file: file, reason: "missing the \"values\" object")
        }
        for key in values.keys {
            if let problem = limits.problem(withKey: key) {
                throw PreferencesError.corrupted(
                    file: file, reason: "stored key \(key.debugDescription.prefix(80)): \(problem)")
            }
        }
        var modifications = ChangeLog()
        if case .object(let records)? = fields["modified"] {
            modifications = ChangeLog(storedKeys: values.keys) { key in
                records[key].flatMap(ChangeRecord.init(storedValue:))
            }
        }
        return StoreDocument(
            values: values, version: version, modifications: modifications,
            otherMembers: fields.filter { !knownMembers.contains($0.key) })
    }

    /// The file's bytes: pretty-printed, keys sorted, newline at the end.
    func encode(file: String, limits: PreferencesLimits) throws -> [UInt8] {
        for (key, value) in values where value.depth > limits.maxDepth {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the value of '\(key)' is nested \(value.depth) levels deep, over the limit of \(limits.maxDepth)"
            )
        }
        // Written here rather than through one `PreferenceValue` tree, with
        // the same bytes as `JSONText` writes for it: the keys are sorted
        // once for `values` and `modified`, and each distinct change record
        // is formatted once, however many keys share it.
        let ordered = JSONText.sortedByKey(values)
        var recordNumbers: [Int?] = []
        recordNumbers.reserveCapacity(ordered.count)
        var anyRecord = false
        for (key, _) in ordered {
            let number = modifications.recordNumber(forKey: key, isStored: true)
            anyRecord = anyRecord || number != nil
            recordNumbers.append(number)
        }
        var members = otherMembers
        members["format"] = .int(Self.currentFormat)
        members["values"] = .null  // written below
        members["modified"] = anyRecord ? .null : nil  // written below
        members["version"] = .int(Int64(version))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + ordered.count * (anyRecord ? 128 : 32))
        bytes.append(UInt8(ascii: "{"))
        for (position, (name, member)) in JSONText.sortedByKey(members).enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONText.newline(into: &bytes, indent: 1)
            JSONText.writeString(name, into: &bytes)
            bytes.append(contentsOf: " : ".utf8)
            switch name {
            case "values":
                Self.writeMembers(ordered.lazy.map { ($0.key, $0.value) }, into: &bytes) {
                    JSONText.write($0, into: &$1, pretty: true, indent: 2)
                }
            case "modified":
                var formatted = [[UInt8]?](
                    repeating: nil, count: modifications.distinctRecords.count)
                let withRecords = zip(ordered, recordNumbers).lazy.compactMap {
                    entry, number in number.map { (entry.key, $0) }
                }
                Self.writeMembers(withRecords, into: &bytes) { number, out in
                    if let text = formatted[number] {
                        out.append(contentsOf: text)
                    } else {
                        var text: [UInt8] = []
                        JSONText.write(
                            modifications.distinctRecords[number].storedValue, into: &text,
                            pretty: true, indent: 2)
                        out.append(contentsOf: text)
                        formatted[number] = text
                    }
                }
            default:
                JSONText.write(member, into: &bytes, pretty: true, indent: 1)
            }
        }
        JSONText.newline(into: &bytes, indent: 0)
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0x0A)
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the new contents are \(bytes.count) bytes, over the limit of \(limits.maxFileSize)"
            )
        }
        return bytes
    }

    /// A member object of the top level, pretty-printed as `JSONText`
    /// prints it, from members already in order.
    private static func writeMembers<Members: Sequence<(String, Member)>, Member>(
        _ members: Members, into out: inout [UInt8],
        value writeValue: (Member, inout [UInt8]) -> Void
    ) {
        var first = true
        for (key, member) in members {
            out.append(UInt8(ascii: first ? "{" : ","))
            first = false
            JSONText.newline(into: &out, indent: 2)
            JSONText.writeString(key, into: &out)
            out.append(contentsOf: " : ".utf8)
            writeValue(member, &out)
        }
        if first {
            out.append(contentsOf: "{}".utf8)
        } else {
            JSONText.newline(into: &out, indent: 1)
            out.append(UInt8(ascii: "}"))
        }
    }

    static func == (lhs: StoreDocument, rhs: StoreDocument) -> Bool {
        lhs.values == rhs.values && lhs.version == rhs.version
            && lhs.otherMembers == rhs.otherMembers
            && lhs.modifications.matches(rhs.modifications, storedKeys: lhs.values.keys)
    }
}
