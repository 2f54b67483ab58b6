import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// The change records of a write worked out from the changed keys alone
/// must be exactly those worked out by looking at every key.
@Suite(.scaledTimeLimit(minutes: 10)) struct ChangeLogEditingTests {
    static func record(_ number: Int) -> ChangeRecord {
        ChangeRecord(
            PreferenceModification(
                date: Date(timeIntervalSince1970: Double(number)), user: "user\(number % 3)",
                program: "tests"))
    }

    /// Random stores, logs and edits: wherever the shortcut gives a log, it
    /// gives every key (stored or not) the record the full build gives it,
    /// and the written file is byte for byte the same.
    @Test func theLogFromTheChangedKeysEqualsTheFullOne() throws {
        var random = SeededGenerator(state: 0x5EED)
        var shortcuts = 0
        let rounds = 2000
        for round in 0..<rounds {
            let count = Int.random(in: 0..<40, using: &random)
            var baseValues: [String: PreferenceValue] = [:]
            for index in 0..<count {
                baseValues["k\(index)"] = .int(Int64.random(in: 0..<3, using: &random))
            }
            // A base log of a few records, some keys with none, and now and
            // then a record for a key that is not stored.
            var recordsByKey: [String: ChangeRecord] = [:]
            for key in baseValues.keys where Int.random(in: 0..<5, using: &random) > 0 {
                recordsByKey[key] = Self.record(Int.random(in: 0..<3, using: &random))
            }
            if Int.random(in: 0..<8, using: &random) == 0 {
                recordsByKey["gone"] = Self.record(7)
            }
            var base = ChangeLog(recordsByKey)
            // Often, a full edit first, which picks a shared record.
            if Int.random(in: 0..<3, using: &random) > 0 {
                var edited = baseValues
                for key in baseValues.keys where Int.random(in: 0..<4, using: &random) == 0 {
                    edited[key] = .int(9)
                }
                base = ChangeLog(
                    editing: base, baseValues: baseValues, values: edited,
                    stamp: Self.record(3 + round % 2))
                baseValues = edited
            }
            // The edit: a few keys changed, removed or added, some set to the
            // value they had, and the changed keys listed, some twice.
            var values = baseValues
            var changedKeys: [String] = []
            for _ in 0..<Int.random(in: 0..<6, using: &random) {
                let key = "k\(Int.random(in: 0..<(count + 3), using: &random))"
                switch Int.random(in: 0..<4, using: &random) {
                case 0: values[key] = nil
                case 1: values[key] = baseValues[key]
                default: values[key] = .int(Int64.random(in: 0..<4, using: &random))
                }
            }
            for key in Set(values.keys).union(baseValues.keys) where values[key] != baseValues[key]
            {
                changedKeys.append(key)
                if Int.random(in: 0..<4, using: &random) == 0 { changedKeys.append(key) }
            }
            let stamp = Self.record(100 + round)
            let full = ChangeLog(
                editing: base, baseValues: baseValues, values: values, stamp: stamp)
            guard
                let shortcut = ChangeLog(
                    editing: base, baseValues: baseValues, values: values,
                    changedKeys: changedKeys, stamp: stamp)
            else { continue }
            shortcuts += 1
            let keys = Set(values.keys).union(baseValues.keys).union(["gone", "never"])
            for key in keys {
                let stored = values[key] != nil
                #expect(
                    shortcut.record(forKey: key, isStored: stored)
                        == full.record(forKey: key, isStored: stored),
                    "round \(round), key \(key)")
            }
            let limits = PreferencesLimits()
            let written = try StoreDocument(values: values, modifications: shortcut)
                .encode(file: "test", limits: limits)
            let expected = try StoreDocument(values: values, modifications: full)
                .encode(file: "test", limits: limits)
            #expect(written == expected, "round \(round)")
        }
        // The shortcut must have been taken often enough to mean something.
        #expect(shortcuts > rounds / 4, "the shortcut was taken \(shortcuts) times")
    }

    /// Through the store: single-key edits of a large store, which take the
    /// shortcut, leave every key with the record it should have, in memory
    /// and in the file.
    @Test func smallEditsOfALargeStoreKeepEveryRecord() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var values: [String: PreferenceValue] = [:]
        for index in 0..<500 { values["k\(index)"] = .int(Int64(index)) }
        let common = #"{"at": "2026-01-02T03:04:05.678Z", "by": "alice", "program": "import"}"#
        let members = values.keys.sorted().map { #""\#($0)": \#(common)"# }
        let valueText = values.keys.sorted().map { #""\#($0)": \#(values[$0]!.jsonText)"# }
        try Data(
            #"{"format": 1, "values": {\#(valueText.joined(separator: ","))}, "modified": {\#(members.joined(separator: ","))}}"#
                .utf8
        ).write(to: url)
        let store = try await PreferencesStore(fileURL: url)
        try await store.edit { $0[raw: "k1"] = 1000 }
        try await store.edit { $0[raw: "k2"] = 2 }  // its own value: changes nothing
        try await store.edit { prefs in
            prefs[raw: "k3"] = 3000
            prefs.remove("k4")
            prefs[raw: "new"] = 1
        }
        try await store.edit { $0[raw: "k5"] = 5000 }
        try await store.edit { $0[raw: "k5"] = 5 }
        let me = ProcessInfo.processInfo.processName
        let inFile = try fileSnapshot(url)
        for snapshot in [store.snapshot, inFile] {
            for index in 0..<500 {
                let key = "k\(index)"
                let record = snapshot.modification(forKey: key)
                switch index {
                case 1, 3, 5: #expect(record?.program == me, "\(key)")
                case 4: #expect(record == nil, "\(key)")
                default: #expect(record?.user == "alice", "\(key)")
                }
            }
            #expect(snapshot.modification(forKey: "new")?.program == me)
        }
        #expect(inFile == store.snapshot)
    }
}
