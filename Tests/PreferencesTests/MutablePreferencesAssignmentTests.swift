import Foundation
import Testing

@testable import Preferences

/// Setting a key looks it up once: the new value goes in and the earlier one
/// comes back. What a user sees must be what it was with two lookups.
@Suite struct MutablePreferencesAssignmentTests {
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
