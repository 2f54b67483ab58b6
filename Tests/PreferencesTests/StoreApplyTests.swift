import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `store.difference(to:prune:)` and `store.apply(_:prune:)`: desired
/// values applied as one change, or nothing. What is "in the file" is read
/// from the file's bytes.
@Suite(.scaledTimeLimit(minutes: 5))
struct StoreApplyTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    /// A store holding a = 1, b = 2, c = 3 (change #1).
    func storeWithThreeKeys(liveReads: Bool = true) async throws -> PreferencesStore {
        let store = try await PreferencesStore(fileURL: url, liveReads: liveReads)
        try await store.edit { prefs in
            prefs[raw: "a"] = 1
            prefs[raw: "b"] = 2
            prefs[raw: "c"] = 3
        }
        return store
    }

    /// The entries the file's history holds, decoded from its bytes.
    func fileHistory() throws -> [HistoryEntry] {
        try fileSnapshot(url).document.history.carried.compactMap(\.entry)
    }

    @Test func theDifferenceNamesChangedAndNewKeysAndLeavesTheOthers() async throws {
        let store = try await storeWithThreeKeys()
        let bytes = try Data(contentsOf: url)
        let desired: [String: PreferenceValue] = ["a": 1, "b": 20, "d": ["x": true]]

        let difference = store.difference(to: desired)
        #expect(
            difference.changes == [
                "b": .init(old: 2, new: 20), "d": .init(old: nil, new: ["x": true]),
            ])
        #expect(!difference.isEmpty)
        #expect(difference.appliedAs == nil)
        #expect(difference.lines == ["b: 2 → 20", #"d: (unset) → {"x":true}"#])
        #expect(difference.description == "b: 2 → 20\n" + #"d: (unset) → {"x":true}"#)

        let pruned = store.difference(to: desired, prune: true)
        #expect(pruned.keys == ["b", "c", "d"])
        #expect(pruned.changes["c"] == .init(old: 3, new: nil))
        #expect(pruned.lines[1] == "c: 3 → (unset)")
        #expect(pruned.removedKeys == ["c"])

        // Nothing was written.
        #expect(try Data(contentsOf: url) == bytes)
        #expect(store.difference(to: ["a": 1, "b": 2]).isEmpty)
        #expect(store.difference(to: ["a": 1, "b": 2, "c": 3], prune: true).description == "")
    }

    @Test func linesAreSortedByKeyBytesWithCompactJSONAndUnset() {
        let accented = "e\u{301}"
        let difference = PreferencesDifference(
            from: ["f": "old", "gone": .null],
            to: ["f": "new", accented: [1, 2.5, "three"], "z": .null], prune: true)
        // "e" + U+0301 (65 CC 81) before "f" (66): byte order, not String's <.
        #expect(
            difference.lines == [
                #"\#(accented): (unset) → [1,2.5,"three"]"#, #"f: "old" → "new""#,
                "gone: null → (unset)", "z: (unset) → null",
            ])
        // An int and a double are different values, as in the file.
        #expect(!PreferencesDifference(from: ["n": 1], to: ["n": 1.0]).isEmpty)
    }

    @Test func applyWritesEveryChangeAsOneHistoryEntry() async throws {
        let store = try await storeWithThreeKeys()
        let applied = try await store.apply(["a": 1, "b": 20, "d": "new", "e": [1, 2]])
        #expect(applied.appliedAs == 2)
        #expect(applied.keys == ["b", "d", "e"])

        let file = try fileSnapshot(url)
        #expect(file.sequence == 2)
        #expect(file.values == ["a": 1, "b": 20, "c": 3, "d": "new", "e": [1, 2]])
        let entries = try fileHistory()
        #expect(entries.map(\.sequence) == [1, 2])
        let last = try #require(entries.last)
        #expect(last.cause == "apply")
        #expect(
            last.changes == [
                "b": .init(old: 2, new: 20), "d": .init(old: nil, new: "new"),
                "e": .init(old: nil, new: [1, 2]),
            ])
    }

    @Test func pruneRemovesTheKeysNotNamedInTheSameChange() async throws {
        let store = try await storeWithThreeKeys()
        let kept = try await store.apply(["a": 10])
        #expect(kept.keys == ["a"])
        #expect(try fileSnapshot(url).values == ["a": 10, "b": 2, "c": 3])

        let pruned = try await store.apply(["a": 10, "b": 2, "z": true], prune: true)
        #expect(pruned.appliedAs == 3)
        #expect(
            pruned.changes == ["c": .init(old: 3, new: nil), "z": .init(old: nil, new: true)])
        #expect(try fileSnapshot(url).values == ["a": 10, "b": 2, "z": true])
        #expect(
            try fileHistory().last?.changes == [
                "c": .init(old: 3, new: nil), "z": .init(old: nil, new: true),
            ])

        // Pruning to nothing empties the store, in one change.
        let emptied = try await store.apply([:], prune: true)
        #expect(emptied.appliedAs == 4)
        #expect(try fileSnapshot(url).values == [:])
    }

    @Test func applyingTwiceWritesOnce() async throws {
        let store = try await storeWithThreeKeys()
        let desired: [String: PreferenceValue] = ["a": 1, "b": "two", "list": [1, ["x": .null]]]
        try #require(try await store.apply(desired, prune: true).appliedAs == 2)
        let bytes = try Data(contentsOf: url)
        let fileIdentity = try identity(url)

        for prune in [false, true] {
            let again = try await store.apply(desired, prune: prune)
            #expect(again.isEmpty)
            #expect(again.appliedAs == nil)
        }
        #expect(store.snapshot.sequence == 2)
        #expect(try fileSnapshot(url).sequence == 2)
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try identity(url) == fileIdentity)
        #expect(try fileHistory().count == 2)
    }

    /// The difference applied is the one under the lock, on the state the
    /// change replaces: a key another process set meanwhile to the desired
    /// value is not changed again, and not reported.
    @Test func applyComparesWithTheStateItReplaces() async throws {
        // No live reads: this handle's snapshot stays as it was.
        let store = try await storeWithThreeKeys(liveReads: false)
        let set = try await runChild("prefs", ["--file", url.path, "set", "a", "5"])
        try #require(set.status == 0, "\(set.standardError)")
        #expect(store.difference(to: ["a": 5, "b": 20]).keys == ["a", "b"])

        let applied = try await store.apply(["a": 5, "b": 20])
        #expect(applied.changes == ["b": .init(old: 2, new: 20)])
        #expect(applied.appliedAs == 3)
        #expect(try fileSnapshot(url).values == ["a": 5, "b": 20, "c": 3])
        #expect(try fileHistory().last?.keys == ["b"])
    }

    @Test func aKeyThatCannotBeStoredAppliesNothing() async throws {
        let store = try await storeWithThreeKeys()
        let bytes = try Data(contentsOf: url)
        await #expect(throws: PreferencesError.self) {
            try await store.apply(["a": 100, "": 1])
        }
        #expect(try Data(contentsOf: url) == bytes)
        #expect(store.snapshot.values == ["a": 1, "b": 2, "c": 3])
    }
}
