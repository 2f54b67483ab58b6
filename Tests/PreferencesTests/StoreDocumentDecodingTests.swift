import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Opening a store pairs each stored key with its change record (S18) by
/// the order of the text when `modified` lists exactly the keys of
/// `values`, as the store writes it, and by key otherwise; and it checks an
/// entry whose bytes repeat the entry before only by comparing them. Every
/// document must read exactly as the plain reading of the whole text says.
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreDocumentDecodingTests {
    /// Change records as a file may hold them, a few repeated byte for byte,
    /// with entries that are no record (which give a key none).
    static let recordTexts = [
        #"{"at" : "2026-12-01T09:30:12.345Z", "by" : "alice", "program" : "prefs"}"#,
        #"{"at" : "2026-12-01T09:30:12.345Z", "by" : "bob", "program" : "prefs"}"#,
        #"{"at" : "2026-12-02T00:00:00Z", "by" : "root", "program" : "p", "sudo_user" : "al"}"#,
        #"{"at" : "t", "by" : "b", "program" : "p", "by" : "later"}"#,
        #"{"at" : "t", "by" : "b"}"#,
        #"{"at" : "t", "by" : 3, "program" : "p"}"#,
        #"{"at" : "t", "by" : "b", "program" : "p", "sudo_user" : 5}"#,
        #"{"at" : "t", "at" : 3, "by" : "b", "program" : "p"}"#,
        #"{"at" : 3, "at" : "t", "by" : "b", "program" : "p", "sudo_user" : "x", "sudo_user" : null}"#,
        #"{"x" : {"at" : [1, {"y" : null}]}, "at" : "t\u00e9\n", "by" : "b\"", "program" : "p"}"#,
        #"{"program" : "p", "by" : "b", "at" : "t", "future" : true}"#,
        "{}", "12", "123", #""text""#, "[1, 2]", "null",
    ]

    /// The record each stored key has by the plain reading: the whole text
    /// parsed into values (the last member of a repeated name wins), each
    /// stored key's `modified` entry read as a record.
    static func expectedRecords(_ bytes: [UInt8]) throws -> [String: ChangeRecord?] {
        guard case .object(let fields) = try JSONText.parse(bytes, source: "f"),
            case .object(let values)? = fields["values"]
        else { throw PreferencesError.corrupted(file: "f", reason: "no values") }
        var modified: [String: PreferenceValue] = [:]
        if case .object(let entries)? = fields["modified"] { modified = entries }
        var records: [String: ChangeRecord?] = [:]
        for key in values.keys {
            records[key] = modified[key].flatMap(ChangeRecord.init(storedValue:))
        }
        return records
    }

    /// A document with the keys of `values` and the entries of `modified`
    /// in the given orders (repeats included); entries' texts by number.
    /// Keys in `escaped` are spelled in `modified` with their first
    /// character as a `\u` escape.
    static func document(
        values: [String], modified: [(String, Int)], escaped: Set<String> = []
    ) -> [UInt8] {
        func quoted(_ key: String, escaping: Bool) -> String {
            var bytes: [UInt8] = []
            JSONText.writeString(key, into: &bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            // Only a first character written as itself is respelled.
            guard escaping, let first = key.unicodeScalars.first, first.value < 0x80,
                text.unicodeScalars.dropFirst().first == first
            else { return text }
            let hex = String(first.value, radix: 16)
            return "\"\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                + String(text.dropFirst(2))
        }
        let valueMembers = values.map { "\(quoted($0, escaping: false)) : \"v\"" }
            .joined(separator: ",\n    ")
        let entryMembers = modified.map {
            "\(quoted($0.0, escaping: escaped.contains($0.0))) : \(recordTexts[$0.1])"
        }
        .joined(separator: ",\n    ")
        return Array(
            """
            {
              "format" : 1,
              "modified" : {
                \(entryMembers)
              },
              "values" : {
                \(valueMembers)
              },
              "version" : 0
            }

            """.utf8)
    }

    static func check(_ bytes: [UInt8], _ comment: Comment) throws {
        let expected = try expectedRecords(bytes)
        let document = try StoreDocument.decode(bytes, file: "f", limits: PreferencesLimits())
        #expect(Set(document.values.keys) == Set(expected.keys), comment)
        for (key, record) in expected {
            #expect(document.modifications.record(forKey: key, isStored: true) == record, comment)
        }
        // Entries of keys that are not stored leave nothing behind.
        for key in ["zz", "k9"] where expected[key] == nil {
            #expect(document.modifications.record(forKey: key, isStored: false) == nil, comment)
        }
    }

    @Test func generatedDocumentsReadAsThePlainParseReadsThem() throws {
        var generator = SeededGenerator(state: 0x5EED_C01D)
        let names = (0..<12).map { "k\($0)" } + ["a", "é", "e\u{301}", "zz", "q\"t", "b\\s", "ü"]
        for round in 0..<300 {
            var values = Array(
                names.shuffled(using: &generator).prefix(Int.random(in: 0...12, using: &generator)))
            values.sort(by: JSONText.precedesByBytes)
            // Most rounds share one or two records, as stores written by a
            // few edits do.
            let pool = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                Int.random(in: 0..<Self.recordTexts.count, using: &generator)
            }
            func pick() -> Int { pool.randomElement(using: &generator)! }
            var modified: [(String, Int)]
            switch round % 6 {
            case 0, 1:
                // As the store writes it: one entry per stored key, same order.
                modified = values.map { ($0, pick()) }
            case 2:
                // The same keys in another order.
                modified = values.shuffled(using: &generator).map { ($0, pick()) }
            case 3:
                // A key missing, or one that is not stored added.
                modified = values.map { ($0, pick()) }
                if !modified.isEmpty && Bool.random(using: &generator) {
                    modified.remove(at: Int.random(in: 0..<modified.count, using: &generator))
                } else {
                    modified.append(("zz", pick()))
                }
            case 4:
                // A key listed twice (the last counts), as long as the
                // list of stored keys or one shorter.
                modified = values.map { ($0, pick()) }
                if let key = values.randomElement(using: &generator) {
                    modified.insert((key, pick()), at: 0)
                    if Bool.random(using: &generator) { modified.removeLast() }
                }
            default:
                // `values` repeating a key, `modified` listing each once.
                modified = values.map { ($0, pick()) }
                if let key = values.first { values.append(key) }
            }
            // Some rounds spell a key of `modified` with an escape, which
            // is the same key.
            let escaped: Set<String> =
                round % 5 == 4 ? [values.randomElement(using: &generator) ?? ""] : []
            try Self.check(
                Self.document(values: values, modified: modified, escaped: escaped),
                "round \(round): \(modified), escaping \(escaped)")
        }
    }

    @Test func aFileWrittenByTheStoreReadsBackItsRecords() throws {
        let alice = ChangeRecord(
            PreferenceModification(
                date: Date(timeIntervalSince1970: 1_764_581_412), user: "alice", sudoUser: nil,
                program: "prefs"))
        let root = ChangeRecord(
            PreferenceModification(
                date: Date(timeIntervalSince1970: 1_764_600_000), user: "root", sudoUser: "al",
                program: "p"))
        var records: [String: ChangeRecord] = [:]
        var values: [String: PreferenceValue] = [:]
        for index in 0..<40 {
            values["key_\(index)"] = .int(Int64(index))
            if index % 7 != 3 { records["key_\(index)"] = index % 5 == 0 ? root : alice }
        }
        let written = StoreDocument(values: values, modifications: ChangeLog(records))
        let bytes = try written.encode(file: "f", limits: PreferencesLimits())
        try Self.check(bytes, "written by the store")
        let read = try StoreDocument.decode(bytes, file: "f", limits: PreferencesLimits())
        #expect(try read.encode(file: "f", limits: PreferencesLimits()) == bytes)
        #expect(read.modifications.recordsByKey(storedKeys: values.keys) == records)
    }

    @Test func manyDistinctRecordsKeepTheirKeys() throws {
        // More distinct records than are looked up by comparison, and more
        // distinct texts than are remembered while reading, some repeated.
        var records: [String: ChangeRecord] = [:]
        var values: [String: PreferenceValue] = [:]
        for index in 0..<60 {
            let modification = PreferenceModification(
                date: Date(timeIntervalSince1970: 1_764_000_000 + Double(index % 25) * 60),
                user: "user\(index % 25)", sudoUser: index % 2 == 0 ? nil : "root",
                program: "prefs")
            records["key_\(index)"] = ChangeRecord(modification)
            values["key_\(index)"] = .bool(index % 3 == 0)
        }
        let log = ChangeLog(records)
        #expect(log.recordsByKey(storedKeys: values.keys) == records)
        let bytes = try StoreDocument(values: values, modifications: log).encode(
            file: "f", limits: PreferencesLimits())
        try Self.check(bytes, "many records")
        let read = try StoreDocument.decode(bytes, file: "f", limits: PreferencesLimits())
        #expect(read.modifications.recordsByKey(storedKeys: values.keys) == records)
    }

    @Test func theKeyOrderOfValuesIsTheTextsOrder() throws {
        let text = Array(
            #"""
            {"values": {"b": {"z": 1, "a": 2}, "a": 1, "c": [{"q": 1}], "a": 2},
             "other": {"y": 1}, "modified": {"m": 1}}
            """#.utf8)
        let parsed = try StoreDocument.readText(text, source: "f", maxDepth: 8)
        let keys = try #require(parsed.valuesKeyOrder).map {
            String(decoding: text[$0], as: UTF8.self)
        }
        #expect(keys == [#""b""#, #""a""#, #""c""#, #""a""#])
        #expect(parsed.recordEntries?.map { $0.key(in: text) } == ["m"])

        let repeated = Array(#"{"values": {"a": 1}, "values": {}}"#.utf8)
        #expect(try StoreDocument.readText(repeated, source: "f", maxDepth: 8).valuesKeyOrder == [])
        let notAnObject = Array(#"{"values": {"a": 1}, "values": [{"b": 1}]}"#.utf8)
        #expect(
            try StoreDocument.readText(notAnObject, source: "f", maxDepth: 8).valuesKeyOrder == nil)
    }
}
