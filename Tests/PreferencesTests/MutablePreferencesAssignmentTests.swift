import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Setting a key looks it up once: the new value goes in and the earlier one
/// comes back. What a user sees must be what it was with two lookups.
@Suite(.scaledTimeLimit(minutes: 10)) struct MutablePreferencesAssignmentTests {
    /// Swift's `==` calls a string in another Unicode spelling (é as one
    /// scalar, and as e with a combining accent) equal, and -0.0 equal to
    /// 0.0. Setting such a value changes nothing: the stored spelling stays,
    /// in memory and in the file, also when another key changes in the same
    /// edit.
    @Test func anEqualValueInAnotherSpellingKeepsTheStoredOne() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.edit { prefs in
            prefs[raw: "name"] = .string("caf\u{e9}")
            prefs[raw: "zero"] = .double(0.0)
        }
        let before = try Data(contentsOf: url)
        try await store.edit { prefs in
            prefs[raw: "name"] = .string("cafe\u{301}")
            prefs[raw: "zero"] = .double(-0.0)
        }
        #expect(try Data(contentsOf: url) == before, "an edit that changes nothing writes nothing")
        try await store.edit { prefs in
            prefs[raw: "name"] = .string("cafe\u{301}")
            prefs[raw: "zero"] = .double(-0.0)
            prefs[raw: "other"] = 1
        }
        guard case .string(let name)? = store.snapshot.values["name"],
            case .double(let zero)? = store.snapshot.values["zero"]
        else {
            Issue.record("the values are gone: \(store.snapshot.values)")
            return
        }
        #expect(Array(name.utf8) == Array("caf\u{e9}".utf8))
        #expect(zero.sign == .plus)
        let written = try Data(contentsOf: url)
        #expect(written.firstRange(of: Data("\"caf\u{e9}\"".utf8)) != nil)
        #expect(written.firstRange(of: Data("\"zero\" : 0.0".utf8)) != nil)
    }

    /// A transform that sets new keys and changes one, then throws, leaves
    /// the store as it was: none of the new keys, the old value.
    @Test func aThrowingTransformTakesBackNewKeysAndChangedOnes() async throws {
        struct Refused: Error {}
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.edit { $0[raw: "kept"] = "old" }
        let before = try Data(contentsOf: url)
        await #expect(throws: Refused.self) {
            try await store.edit { prefs in
                for index in 0..<100 { prefs[raw: "new.\(index)"] = .int(Int64(index)) }
                prefs[raw: "kept"] = "changed"
                prefs.remove("kept")
                throw Refused()
            }
        }
        #expect(store.snapshot.values == ["kept": "old"])
        #expect(try Data(contentsOf: url) == before)
    }
}

/// `merge` stores many values in one step; what it stores, rolls back and
/// refuses must be what setting each key in turn does.
@Suite(.scaledTimeLimit(minutes: 10)) struct MutablePreferencesMergeTests {
    private func imported(_ count: Int) -> [String: PreferenceValue] {
        var values: [String: PreferenceValue] = [:]
        for index in 0..<count { values["imported.\(index)"] = .string("value \(index)") }
        return values
    }

    /// Into an empty store the dictionary is taken as it is: every key is
    /// stored, in the file too, and each has its change record.
    @Test func intoAnEmptyStoreEveryKeyIsStoredWithItsRecord() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let values = imported(500)
        try await store.edit { try $0.merge(values) }
        #expect(store.snapshot.values == values)
        let inFile = try fileSnapshot(url)
        #expect(inFile.values == values)
        for key in ["imported.0", "imported.499"] {
            #expect(inFile.modification(forKey: key) != nil, "no record for \(key)")
        }
    }

    /// Into a store with keys, the result, in memory and on disk, equals
    /// setting each key in turn: new keys added, changed keys replaced,
    /// others kept, and an equal value in another spelling left as stored.
    @Test func intoAStoreWithKeysItEqualsSettingEachKey() async throws {
        let directory = try TemporaryDirectory()
        let merged = try await PreferencesStore(fileURL: directory.file("merged.json"))
        let assigned = try await PreferencesStore(fileURL: directory.file("assigned.json"))
        let start: [String: PreferenceValue] = [
            "kept": 1, "changed": "old", "name": .string("caf\u{e9}"),
        ]
        let incoming: [String: PreferenceValue] = [
            "changed": "new", "name": .string("cafe\u{301}"), "added": [1, 2], "null": .null,
        ]
        for store in [merged, assigned] {
            try await store.edit { prefs in for (key, value) in start { prefs[raw: key] = value } }
        }
        try await merged.edit { try $0.merge(incoming) }
        try await assigned.edit { prefs in
            for (key, value) in incoming { prefs[raw: key] = value }
        }
        #expect(merged.snapshot.values == assigned.snapshot.values)
        guard case .string(let name)? = merged.snapshot.values["name"] else {
            Issue.record("name is gone: \(merged.snapshot.values)")
            return
        }
        #expect(Array(name.utf8) == Array("caf\u{e9}".utf8), "the stored spelling stays")
        let mergedFile = try String(contentsOf: directory.file("merged.json"), encoding: .utf8)
        let assignedFile = try String(contentsOf: directory.file("assigned.json"), encoding: .utf8)
        let valuesPart = { (text: String) in text.components(separatedBy: "\"values\"").last }
        #expect(valuesPart(mergedFile) == valuesPart(assignedFile))
    }

    /// A key that cannot be stored fails the merge, naming the first such
    /// key in byte order, and nothing of it is stored.
    @Test func aKeyThatCannotBeStoredFailsTheMergeAndStoresNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.edit { $0[raw: "kept"] = 1 }
        let before = try Data(contentsOf: url)
        var withBadKeys = imported(50)
        withBadKeys["z\tlast"] = 1
        withBadKeys["b\u{7F}first"] = 1
        withBadKeys[""] = 1
        let values = withBadKeys
        for empty in [false, true] {
            if empty { try await store.clear() }
            let fileBefore = try Data(contentsOf: url)
            await #expect {
                try await store.edit { try $0.merge(values) }
            } throws: { error in
                guard case PreferencesError.invalidKey(let key, _) = error else { return false }
                return key == ""
            }
            #expect(store.snapshot.values == (empty ? [:] : ["kept": 1]))
            #expect(try Data(contentsOf: url) == fileBefore)
            if !empty { #expect(fileBefore == before) }
        }
    }

    /// In a group commit, a transform that merges and then throws is taken
    /// back alone — into an empty store and into one with keys — while the
    /// edits around it are stored. The group is forced: a first edit holds
    /// the write until the other two are queued, so all three share it.
    @Test func aThrowingTransformThatMergedIsTakenBackAlone() async throws {
        struct Refused: Error {}
        for startEmpty in [true, false] {
            let directory = try TemporaryDirectory()
            let url = directory.file("prefs.json")
            let storage = CountingStorage(FileStorage(fileURL: url))
            let store = try await PreferencesStore(storage: storage)
            if !startEmpty { try await store.edit { $0[raw: "kept"] = "old" } }
            let before = store.snapshot.values
            let writesBefore = storage.writes.load(ordering: .relaxed)
            let values = imported(200)
            let release = DispatchSemaphore(value: 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await store.edit { prefs in
                        _ = release.wait(timeout: .now() + TestTime.scaled(seconds: 120))
                        prefs[raw: "first"] = 1
                    }
                }
                let holding = await eventually(seconds: 120) {
                    store.core.queue.outstandingCount > 0
                }
                #expect(holding, "the first edit never reached the store's queue")
                group.addTask {
                    await #expect(throws: Refused.self) {
                        try await store.edit { prefs in
                            try prefs.merge(values)
                            prefs[raw: "kept"] = "changed"
                            throw Refused()
                        }
                    }
                }
                group.addTask { try await store.edit { $0[raw: "other"] = 2 } }
                let queued = await eventually(seconds: 120) { store.pendingEditCount == 2 }
                #expect(queued, "the two edits were not queued behind the first")
                release.signal()
                try await group.waitForAll()
            }
            var expected = before
            expected["first"] = 1
            expected["other"] = 2
            #expect(store.snapshot.values == expected, "starting empty: \(startEmpty)")
            #expect(try fileSnapshot(url).values == expected, "starting empty: \(startEmpty)")
            let writes = storage.writes.load(ordering: .relaxed) - writesBefore
            #expect(writes == 1, "the three edits took \(writes) writes, not one group")
        }
    }
}
