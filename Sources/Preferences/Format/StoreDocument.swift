/// The preferences file layout (<doc:FileFormat>): a JSON object with the layout's
/// `format` (1), the app's data `version` (0 when absent), the stored
/// `values`, and for each stored key when and by whom it was last changed
/// (`modified`, S18 in <doc:StoreGuarantees>).
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
/// written back unchanged, as records keep fields they do not declare
/// (R3, <doc:Records>),
/// so a later addition to the layout never makes a file unreadable to an
/// older reader, and an older writer never drops it.
///
/// Each member is declared here once, with its value when the file has
/// none; ``decode(_:file:limits:)`` reads it and ``plainMembers`` writes
/// it. A snapshot holds its document (``PreferencesSnapshot``), and an
/// edit starts from the one it read, so every member is carried over.
struct StoreDocument: Sendable {
    static let currentFormat: Int64 = 1

    /// The stored values (`values`): what the keys read when no temporary
    /// value holds.
    var values: [String: PreferenceValue] = [:]
    /// The app's data version (`version`), 0 when absent.
    var version = 0
    /// When and by whom each stored key was last changed (`modified`);
    /// only stored keys have one.
    var modifications = ChangeLog()
    /// Top-level members this version does not know, kept for writing back
    /// (so never one of the members above).
    var otherMembers: [String: PreferenceValue] = [:]
    /// The sequence number and the history entries it carries (`sequence`,
    /// `history`, `history_keep`, <doc:HistoryAndUndo>).
    var history = DocumentHistory()
    /// Values that hold until a time (`temporary`,
    /// <doc:ChangingSettingsSafely>); `values` has what the keys read once
    /// they end.
    var temporary = TemporaryValues()
    /// The keys some program declared secret (`secrets`): every writer
    /// keeps their values out of the history and the file private.
    var secretKeys: Set<String> = []
}

extension StoreDocument {
    /// The document an edit of `base` writes: `values` and `version`, with
    /// `stamp` on every key whose value changed, the earlier records of the
    /// keys that did not, none for removed keys, and every other member of
    /// `base`'s document.
    ///
    /// `changedKeys`, when the caller knows them, are the keys whose value
    /// differs between `base` and `values`; the change records are then
    /// worked out from those keys alone where that gives the same log.
    init(
        editing base: PreferencesSnapshot, values: [String: PreferenceValue], version: Int,
        stamp: PreferenceModification, changedKeys: [String]? = nil
    ) {
        self = base.document
        let record = ChangeRecord(stamp)
        modifications =
            changedKeys.flatMap {
                ChangeLog(
                    editing: modifications, baseValues: base.values, values: values,
                    changedKeys: $0, stamp: record)
            }
            ?? ChangeLog(
                editing: modifications, baseValues: base.values, values: values, stamp: record)
        self.values = values
        self.version = version
    }

    /// Reads a file's bytes; every problem is ``PreferencesError/corrupted(file:reason:)``.
    static func decode(_ bytes: [UInt8], file: String, limits: PreferencesLimits) throws
        -> StoreDocument
    {
        func corrupted(_ reason: String) -> PreferencesError {
            PreferencesError.corrupted(file: file, reason: reason)
        }
        if bytes.count > limits.maxFileSize {
            throw corrupted("file is \(bytes.count) bytes, over the limit of \(limits.maxFileSize)")
        }
        if bytes.isEmpty { throw corrupted("the file is empty") }
        // `values`, `modified` and `history` are read their own way
        // (`StoreDocument+Decoding.swift`).
        let parsed: Text
        do {
            // The envelope and `values` add two levels above the stored values.
            parsed = try readText(bytes, source: file, maxDepth: limits.maxDepth + 2)
        } catch PreferencesError.corrupted(_, let reason) {
            throw corrupted("not valid JSON: \(reason)")
        }
        guard case .object(var fields) = parsed.value else {
            throw corrupted(
                "expected a JSON object at the top, found \(parsed.value.typeDescription)")
        }
        // Each member read is taken out: what is left, usually nothing, is
        // what this version does not know.
        func take(_ name: String) -> PreferenceValue? { fields.removeValue(forKey: name) }
        guard let format = take("format") else { throw corrupted("missing the \"format\" field") }
        guard format == .int(currentFormat) else {
            throw corrupted(
                "unknown format \(format.jsonText) (this version reads format \(currentFormat))")
        }
        var document = StoreDocument()
        if let stored = take("version") {
            guard case .int(let number) = stored, number >= 0, let value = Int(exactly: number)
            else {
                throw corrupted(
                    "\"version\" must be a non-negative integer, found \(stored.jsonText)")
            }
            document.version = value
        }
        guard case .object(let values)? = take("values") else {
            throw corrupted("missing the \"values\" object")
        }
        for key in values.keys {
            if let problem = limits.problem(withKey: key) {
                throw corrupted("stored key \(key.debugDescription.prefix(80)): \(problem)")
            }
        }
        document.values = values
        _ = take("modified")
        if let recordEntries = parsed.recordEntries {
            document.modifications = ChangeLog(
                storedKeys: values.keys, storedOrder: parsed.valuesKeyOrder, entries: recordEntries,
                in: bytes, file: file)
        }
        document.history = try DocumentHistory(
            fields: fields, elements: parsed.historyElements, in: bytes, file: file)
        for name in DocumentHistory.memberNames { fields[name] = nil }
        document.temporary = TemporaryValues(member: take("temporary"))
        if case .array(let names)? = take("secrets") {
            for case .string(let name) in names { document.secretKeys.insert(name) }
        }
        document.otherMembers = fields
        return document
    }

    /// The top-level members written through the general JSON writer, by
    /// name, the members this version does not know among them: all but
    /// `values`, `modified` and `history`, which the writer puts together
    /// from their parts (``encode(file:limits:reusingKeyOrder:)``). A member
    /// with nothing to say is left out.
    var plainMembers: [String: PreferenceValue] {
        var members = otherMembers
        members.reserveCapacity(otherMembers.count + 6)
        members["format"] = .int(Self.currentFormat)
        members["version"] = .int(Int64(version))
        members.merge(history.members) { _, own in own }
        members["temporary"] = temporary.member
        if !secretKeys.isEmpty {
            members["secrets"] = .array(
                secretKeys.sorted(by: JSONText.precedesByBytes).map(PreferenceValue.string))
        }
        return members
    }
}
