import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// The file's bytes are written by a writer of their own (keys sorted once,
/// each distinct change record formatted once); they must be exactly what
/// the general JSON writer gives for the same document (<doc:FileFormat>).
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreDocumentEncodingTests {
    /// The document as one JSON tree, written by the general writer.
    static func reference(_ document: StoreDocument) -> [UInt8] {
        var members = document.otherMembers
        members["format"] = .int(StoreDocument.currentFormat)
        members["values"] = .object(document.values)
        members["version"] = .int(Int64(document.version))
        var records: [String: PreferenceValue] = [:]
        for key in document.values.keys {
            if let record = document.modifications.record(forKey: key, isStored: true) {
                records[key] = record.storedValue
            }
        }
        if !records.isEmpty { members["modified"] = .object(records) }
        return JSONText.encodeBytes(.object(members), pretty: true) + [0x0A]
    }

    static let alice = ChangeRecord(
        PreferenceModification(
            date: Date(timeIntervalSince1970: 1_700_000_000.123), user: "alice", program: "app"))
    static let bob = ChangeRecord(
        PreferenceModification(
            date: Date(timeIntervalSince1970: 1_800_000_000), user: "root", sudoUser: "bob",
            program: "prefs"))

    static let documents: [(String, StoreDocument)] = {
        var many: [String: PreferenceValue] = [:]
        var records: [String: ChangeRecord] = [:]
        for index in 0..<300 {
            let key = "setting.\(index)"
            many[key] = index % 2 == 0 ? .int(Int64(index)) : .string("v\(index)")
            if index % 7 != 0 { records[key] = index % 5 == 0 ? bob : alice }
        }
        return [
            ("empty", StoreDocument()),
            ("no records", StoreDocument(values: ["b": true, "a": [1, 2], "c": ["x": .null]])),
            (
                "records, unknown members and a version",
                StoreDocument(
                    values: many, version: 3, modifications: ChangeLog(records),
                    otherMembers: ["future": ["note": [1, 2]], "aardvark": 1, "zz": "last"])
            ),
            (
                "one record shared by most keys, a few keys with another or none",
                sharedRecordDocument()
            ),
            (
                "keys outside ASCII, and a record of a key that is not stored",
                StoreDocument(
                    values: ["été": 1, "ete": 2, "Zoë": "x", "a\"b": .double(1.5)],
                    modifications: ChangeLog(["été": alice, "gone": bob, "a\"b": bob]))
            ),
        ]
    }()

    /// 200 keys as a file this library writes lists them: most share one
    /// record, five have another, three have none, and the file also holds
    /// the record of a key that is not stored. Read back, the log lists
    /// only the few keys apart from the shared record.
    static func sharedRecordDocument() -> StoreDocument {
        var values: [String: PreferenceValue] = [:]
        var records: [String: PreferenceValue] = [:]
        for index in 0..<200 {
            let key = "k.\(index)"
            values[key] = .int(Int64(index))
            switch index {
            case 3, 50, 99, 150, 199: records[key] = bob.storedValue
            case 1, 2, 120: break
            default: records[key] = alice.storedValue
            }
        }
        records["gone"] = bob.storedValue
        let members: [String: PreferenceValue] = [
            "format": .int(StoreDocument.currentFormat), "values": .object(values),
            "modified": .object(records), "version": 0,
        ]
        let bytes = JSONText.encodeBytes(.object(members), pretty: true) + [0x0A]
        return try! StoreDocument.decode(bytes, file: "f", limits: PreferencesLimits())
    }

    /// A write after a known encoding copies it around the changed entries
    /// when the keys are the same, and is encoded afresh when they are not
    /// (a key swapped for another, a key without a record): the bytes are
    /// those of the general writer either way.
    @Test func aFileCopiedFromTheWriteBeforeHasTheBytesOfTheGeneralWriter() throws {
        let first = Self.sharedRecordDocument()
        let limits = PreferencesLimits()
        let encoded = try first.encode(file: "f", limits: limits, after: nil, changedKeys: nil)
        var values = first.values
        values["k.10"] = "changed"
        values["k.11"] = .double(2.5)
        let log = ChangeLog(
            editing: first.modifications, baseValues: first.values, values: values, stamp: Self.bob)
        let changed = StoreDocument(values: values, modifications: log)
        let again = try changed.encode(
            file: "f", limits: limits, after: encoded, changedKeys: ["k.10", "k.11"])
        #expect(again.isCopy, "the write was not copied")
        #expect(again.bytes == Self.reference(changed))

        values["k.12"] = nil
        values["a.new"] = true
        let swapped = StoreDocument(values: values, modifications: first.modifications)
        let other = try swapped.encode(
            file: "f", limits: limits, after: encoded, changedKeys: ["k.12", "a.new"])
        #expect(other.bytes == Self.reference(swapped))
        #expect(!other.isCopy)
        // "k.1" has no record: its value and a new record are encoded afresh.
        values = first.values
        values["k.1"] = 5
        let recorded = StoreDocument(
            values: values,
            modifications: ChangeLog(
                editing: first.modifications, baseValues: first.values, values: values,
                stamp: Self.bob))
        let fresh = try recorded.encode(
            file: "f", limits: limits, after: encoded, changedKeys: ["k.1"])
        #expect(fresh.bytes == Self.reference(recorded))
        #expect(!fresh.isCopy)
    }

    /// A store passes each file it writes to its next write. Through a long
    /// run of small edits of a large store — values changed to other values,
    /// to values Swift calls equal but that are written differently (0.0 and
    /// -0.0, é in one scalar or two), keys added and removed, enough keys
    /// added at once that the dictionary grows, keys that need escapes, a
    /// key swapped for another, a key in another spelling of the same name,
    /// nested values — every write's bytes are exactly those of a fresh
    /// encoding, and most writes were copies of the one before.
    @Test func smallEditsOfALargeStoreWriteTheBytesOfAFreshEncoding() throws {
        let limits = PreferencesLimits()
        var values: [String: PreferenceValue] = [:]
        var records: [String: ChangeRecord] = [:]
        for index in 0..<1_500 {
            let key = index % 250 == 0 ? "quote\"\(index)" : "setting.\(index)"
            values[key] =
                switch index % 4 {
                case 0: .int(Int64(index))
                case 1: .string("value \(index)")
                case 2: .double(Double(index) / 8)
                default: .bool(index % 3 == 0)
                }
            records[key] = Self.alice
        }
        values["zero"] = .double(0)
        values["accent"] = .string("caf\u{e9}")
        values["caf\u{e9}.key"] = 0
        values["nested"] = ["list": [1, "two"], "flag": true]
        for key in ["zero", "accent", "caf\u{e9}.key", "nested"] { records[key] = Self.alice }
        var document = StoreDocument(values: values, modifications: ChangeLog(records))
        var previous = try document.encode(file: "f", limits: limits, after: nil, changedKeys: nil)
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var copies = 0
        for round in 0..<60 {
            var edited = document.values
            var assigned: [String] = []
            // As a store's edit assigns: an equal value keeps what was stored.
            func assign(_ key: String, _ value: PreferenceValue?) {
                if let value, let earlier = edited[key], earlier == value { return }
                edited[key] = value
                assigned.append(key)
            }
            let key = "setting.\(next(1_500))"
            switch round % 10 {
            case 0: assign("zero", .double(round % 20 == 0 ? -0.0 : Double(round)))
            case 1: assign("accent", .string(round % 20 == 1 ? "cafe\u{301}" : "caf\u{e9}"))
            case 2:
                // One key swapped for another: as many keys as before.
                assign(key, nil)
                assign("swapped.\(round)", .int(Int64(round)))
            case 3: assign("added.\(round)", .string("new \(round)"))
            case 4: assign("nested", ["list": [.int(Int64(round)), "two"], "flag": true])
            case 5: assign("quote\"\(250 * next(6))", .int(Int64(round)))
            case 6:
                // Enough new keys that the dictionary grows and lays its
                // keys out again.
                if round == 6 {
                    for extra in 0..<2_000 { assign("grown.\(extra)", .int(Int64(extra))) }
                }
            case 7:
                // A key in another spelling of the same name: Swift's
                // dictionary holds the same entry, the file the new bytes.
                assign("caf\u{e9}.key", nil)
                assign("cafe\u{301}.key", .int(Int64(round)))
            case 8: assign(key, .string("round \(round) ü \u{1F600}"))
            default:
                assign(key, .string("round \(round)"))
                assign("setting.\(next(1_500))", .int(Int64(-round)))
            }
            let changedKeys = assigned.filter { edited[$0] != document.values[$0] }
            let stamp = round % 2 == 0 ? Self.bob : Self.alice
            let log =
                ChangeLog(
                    editing: document.modifications, baseValues: document.values, values: edited,
                    changedKeys: changedKeys, stamp: stamp)
                ?? ChangeLog(
                    editing: document.modifications, baseValues: document.values, values: edited,
                    stamp: stamp)
            document = StoreDocument(values: edited, modifications: log)
            let encoded = try document.encode(
                file: "f", limits: limits, after: previous, changedKeys: changedKeys)
            let fresh = try document.encode(file: "f", limits: limits)
            // Compared as a whole, without printing some 100 KB of bytes.
            let sameAsFresh = encoded.bytes == fresh
            #expect(sameAsFresh, "round \(round): not the bytes of a fresh encoding")
            if round % 10 == 0 {
                let sameAsGeneral = encoded.bytes == Self.reference(document)
                #expect(sameAsGeneral, "round \(round): not the bytes of the general writer")
            }
            if encoded.isCopy { copies += 1 }
            previous = encoded
        }
        // Most rounds change the values of keys already there.
        #expect(copies >= 30, "\(copies) of 60 rounds were copies of the file before")
    }

    @Test(arguments: documents.map(\.0))
    func theWrittenBytesAreThoseOfTheGeneralWriter(_ name: String) throws {
        let document = try #require(Self.documents.first { $0.0 == name }?.1)
        let bytes = try document.encode(file: "f", limits: PreferencesLimits())
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == String(decoding: Self.reference(document), as: UTF8.self))
        // And they read back as the same document.
        let decoded = try StoreDocument.decode(bytes, file: "f", limits: PreferencesLimits())
        #expect(decoded.values == document.values)
        for key in document.values.keys {
            #expect(
                decoded.modifications.record(forKey: key, isStored: true)
                    == document.modifications.record(forKey: key, isStored: true))
        }
    }

    /// Swift's `<` does not order keys that mix Unicode spellings (é as one
    /// scalar, and as e with a combining accent) consistently, so their
    /// order followed the dictionary's layout. Keys are written in the order
    /// of their UTF-8 bytes, the same in every process.
    @Test(arguments: [0, 20])
    func keysInDifferentUnicodeSpellingsAreWrittenInOneOrder(extraKeys: Int) throws {
        let keys = ["e\u{301}", "\u{e9}y"] + (0..<extraKeys).map { "k\($0)" }
        var outputs: Set<[UInt8]> = []
        for capacity in [2, 3, 8, 32, 64, 256, 1024, 4096] {
            var values = [String: PreferenceValue](minimumCapacity: capacity)
            var records: [String: ChangeRecord] = [:]
            for (index, key) in keys.enumerated() {
                values[key] = .int(Int64(index))
                records[key] = Self.alice
            }
            let document = StoreDocument(values: values, modifications: ChangeLog(records))
            outputs.insert(try document.encode(file: "f", limits: PreferencesLimits()))
        }
        #expect(outputs.count == 1, "\(outputs.map { String(decoding: $0, as: UTF8.self) })")
        let text = String(decoding: try #require(outputs.first), as: UTF8.self)
        let combining = try #require(text.utf8.firstRange(of: Array("\"e\u{301}\"".utf8)))
        let single = try #require(text.utf8.firstRange(of: Array("\"\u{e9}y\"".utf8)))
        #expect(
            combining.lowerBound < single.lowerBound, "by bytes, e (0x65) comes before é (0xC3)")
    }

    /// Random documents: keys and strings that need escapes, every kind of
    /// value nested at random, several change records, members this version
    /// does not know. The writer's bytes must be those of the general writer.
    @Test(arguments: 0..<6)
    func randomDocumentsAreWrittenAsTheGeneralWriterWritesThem(_ seed: Int) throws {
        var state = UInt64(seed) &* 0x2545_F491 &+ 7
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let pieces = [
            "a", "key", "é", "😀", "\"", "\\", "\n", "\t", "\u{1}", "\u{7F}", " ", ".", "z", "0",
            "a long run of plain text",
        ]
        func text() -> String {
            (0..<next(6)).map { _ in pieces[next(pieces.count)] }.joined()
        }
        func value(depth: Int) -> PreferenceValue {
            switch next(depth > 2 ? 6 : 8) {
            case 0: return .null
            case 1: return .bool(next(2) == 0)
            case 2: return .int(Int64(next(2_000_001)) - 1_000_000)
            case 3: return .double([0.5, -1e-7, 1e21, 14.0, 3.25][next(5)])
            case 4, 5: return .string(text())
            case 6: return .array((0..<next(4)).map { _ in value(depth: depth + 1) })
            default:
                var fields: [String: PreferenceValue] = [:]
                for _ in 0..<next(12) { fields[text()] = value(depth: depth + 1) }
                return .object(fields)
            }
        }
        let stamps = [Self.alice, Self.bob]
        for _ in 0..<30 {
            var values: [String: PreferenceValue] = [:]
            var records: [String: ChangeRecord] = [:]
            for _ in 0..<next(60) {
                let key = text()
                values[key] = value(depth: 0)
                if next(4) != 0 { records[key] = stamps[next(2)] }
            }
            var others: [String: PreferenceValue] = [:]
            if next(3) == 0 { others[["aardvark", "zz", "v"][next(3)]] = value(depth: 1) }
            let document = StoreDocument(
                values: values, version: next(3), modifications: ChangeLog(records),
                otherMembers: others)
            let bytes = try document.encode(file: "f", limits: PreferencesLimits())
            #expect(
                String(decoding: bytes, as: UTF8.self)
                    == String(decoding: Self.reference(document), as: UTF8.self))
        }
    }
}

/// Every member the file can hold, written as the store writes it: the
/// members beside `values` and `modified` keep their bytes too.
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreDocumentMembersEncodingTests {
    static func everyMember() -> StoreDocument {
        let date = Date(timeIntervalSince1970: 1_800_000_000.25)
        var history = DocumentHistory()
        history.sequence = 7
        history.keep = HistoryLimit(entries: 100, bytes: 4096)
        history.carried = [6, 7].map { sequence in
            DocumentHistory.Carried(
                HistoryEntry(
                    sequence: sequence, date: date, user: "alice", program: "app", host: "h",
                    changes: ["b": HistoryEntry.KeyChange(old: 1, new: 2)]))
        }
        var temporary = TemporaryValues()
        temporary.overrides["b"] = TemporaryValues.Override(value: 9, until: date)
        var document = StoreDocument(
            values: ["a": ["x": [1, "y"]], "b": 2], version: 2,
            modifications: ChangeLog(["b": StoreDocumentEncodingTests.alice]),
            otherMembers: ["aardvark": 1, "temporal": ["z": .null], "zz": "last"],
            history: history)
        document.temporary = temporary
        document.secretKeys = ["b_token", "a_token"]
        return document
    }

    static let everyMemberText = """
        {
          "aardvark" : 1,
          "format" : 1,
          "history" : [
            {"sequence":6,"at":"2027-01-15T08:00:00.250Z","by":"alice","program":"app","host":"h","changes":{"b":{"old":1,"new":2}}},
            {"sequence":7,"at":"2027-01-15T08:00:00.250Z","by":"alice","program":"app","host":"h","changes":{"b":{"old":1,"new":2}}}
          ],
          "history_keep" : {
            "bytes" : 4096,
            "entries" : 100
          },
          "modified" : {
            "b" : {
              "at" : "2023-11-14T22:13:20.123Z",
              "by" : "alice",
              "program" : "app"
            }
          },
          "secrets" : [
            "a_token",
            "b_token"
          ],
          "sequence" : 7,
          "temporal" : {
            "z" : null
          },
          "temporary" : {
            "b" : {
              "until" : "2027-01-15T08:00:00.250Z",
              "value" : 9
            }
          },
          "values" : {
            "a" : {
              "x" : [
                1,
                "y"
              ]
            },
            "b" : 2
          },
          "version" : 2,
          "zz" : "last"
        }

        """

    @Test func aDocumentWithEveryMemberIsWrittenAsThisText() throws {
        let bytes = try Self.everyMember().encode(file: "f", limits: PreferencesLimits())
        #expect(String(decoding: bytes, as: UTF8.self) == Self.everyMemberText)
        // Read back and written again, the same bytes.
        let decoded = try StoreDocument.decode(bytes, file: "f", limits: PreferencesLimits())
        #expect(try decoded.encode(file: "f", limits: PreferencesLimits()) == bytes)
    }
}
