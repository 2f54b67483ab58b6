import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Notes an edit leaves with `MutablePreferences.report(_:key:)` are listed
/// in `problems` once the edit is committed, as a migration's are.
@Suite(.scaledTimeLimit(minutes: 10)) struct EditReportTests {
    @Test func notesOfCommittedEditsAreListedAndThoseOfAFailedEditAreNot() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)

        try await store.edit { prefs in
            prefs[raw: "imported"] = 3
            prefs.report("left out 2 entries of old.properties", key: "imported")
        }
        // An edit that changes nothing is committed too: its note is listed.
        try await store.edit { prefs in prefs.report("checked the import") }
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.edit { prefs in
                prefs[raw: "other"] = 1
                prefs.report("from an edit that threw")
                throw Refused()
            }
        }

        #expect(
            store.problems == [
                PreferencesProblem(
                    key: "imported", message: "left out 2 entries of old.properties"),
                PreferencesProblem(key: nil, message: "checked the import"),
            ])
        // Another handle on the same file lists them as well.
        let other = try await PreferencesStore(fileURL: url)
        #expect(other.problems.map(\.message).contains("checked the import"))
    }

    /// When the write of an edit fails — here its last step, the fsync of
    /// the directory after the file was renamed into place — its notes go
    /// with it.
    @Test func theNotesOfAnEditWhoseWriteFailsAreDropped() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.set(PreferenceKey<Int>("a", default: 0), 1)
        Platform.injectFault(.directorySync, at: directory.path, code: EIO)
        await #expect(throws: PreferencesError.self) {
            try await store.edit { prefs in
                prefs[raw: "a"] = 2
                prefs.report("should not be listed")
            }
        }
        Platform.clearFault(.directorySync, at: directory.path)
        try await store.edit { prefs in
            prefs[raw: "a"] = 3
            prefs.report("listed")
        }
        #expect(store.problems.map(\.message) == ["listed"])
    }

    /// However many notes edits leave, the latest 100 are kept.
    @Test func theLatestHundredNotesAreKept() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.edit { prefs in
            for number in 0..<70 { prefs.report("note \(number)") }
        }
        try await store.edit { prefs in
            prefs[raw: "a"] = 1
            for number in 70..<150 { prefs.report("note \(number)") }
        }
        #expect(store.problems.map(\.message) == (50..<150).map { "note \($0)" })
    }
}
