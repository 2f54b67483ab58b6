import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

private struct Settings: PreferencesRecord {
    var language = "en"
    var volume = 5
    var zoom = 14.0
}

/// When and by whom each stored key was last changed (S18, <doc:StoreGuarantees>).
@Suite(.scaledTimeLimit(minutes: 10)) struct ChangeMetadataTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    @Test func aSetRecordsWhenWhoAndWhichProgram() async throws {
        let store = try await PreferencesStore(fileURL: url)
        let before = Date()
        try await store.set(.language, "fr")
        let after = Date()
        let change = try #require(store.snapshot.modification(forKey: "language"))
        #expect(change.user == effectiveUserName())
        #expect(change.program == ProcessInfo.processInfo.processName)
        #expect(change.sudoUser == nil || change.user == "root")
        // Recorded in milliseconds.
        #expect(change.date >= before.addingTimeInterval(-0.001) && change.date <= after)
        // The file holds it, as a new process reads it.
        #expect(try fileSnapshot(url).modification(forKey: "language") == change)
    }

    @Test func defaultsAndRemovedKeysHaveNoRecord() async throws {
        let store = try await PreferencesStore(fileURL: url)
        #expect(store.snapshot.modification(forKey: "language") == nil)
        try await store.set(.language, "fr")
        try await store.remove(.language)
        #expect(store.snapshot.modification(forKey: "language") == nil)
        let inFile = try fileSnapshot(url)
        #expect(inFile.values["language"] == nil)
        #expect(inFile.modification(forKey: "language") == nil)
    }

    @Test func settingTheCurrentValueWritesNothingAndKeepsTheRecord() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        let change = store.snapshot.modification(forKey: "language")
        let bytes = contents(url)
        let stamp = try identity(url)
        try await store.set(.language, "fr")
        try await store.edit { $0[.language] = "fr" }
        #expect(contents(url) == bytes)
        #expect(try identity(url) == stamp)
        #expect(store.snapshot.modification(forKey: "language") == change)
    }

    @Test func anEditStampsOnlyTheKeysItChanged() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        let first = try #require(store.snapshot.modification(forKey: "language"))
        // Later, so a new stamp would differ from the first.
        try await Task.sleep(for: .milliseconds(5))
        try await store.edit { prefs in
            prefs[.language] = "fr"
            prefs[.darkMode] = true
        }
        #expect(store.snapshot.modification(forKey: "language") == first)
        let second = try #require(store.snapshot.modification(forKey: "dark_mode"))
        #expect(second.date > first.date)
    }

    @Test func aRecordUpdateStampsOnlyTheFieldsItChanged() async throws {
        let settings = try await RecordStore<Settings>(fileURL: url)
        try await settings.update {
            $0.language = "fr"
            $0.volume = 7
        }
        let snapshot = settings.store.snapshot
        let language = try #require(snapshot.modification(forKey: "language"))
        try await Task.sleep(for: .milliseconds(5))
        try await settings.update { $0.volume = 8 }
        let later = settings.store.snapshot
        #expect(later.modification(forKey: "language") == language)
        #expect(try #require(later.modification(forKey: "volume")).date > language.date)
        #expect(later.modification(forKey: "zoom") == nil)
    }

    @Test func aMigrationStampsWhatItImports() async throws {
        let legacy = directory.file("old.properties")
        try write("language=de\n", to: legacy)
        let before = Date().addingTimeInterval(-0.001)
        let store = try await PreferencesStore(
            fileURL: url, migrations: [LegacyImport(.properties, at: legacy)])
        let change = try #require(store.snapshot.modification(forKey: "language"))
        #expect(change.date >= before)
        #expect(change.program == ProcessInfo.processInfo.processName)
    }

    @Test func aChangeByPrefsNamesPrefs() async throws {
        let workspace = try CLIWorkspace()
        #expect(try await workspace.prefs("set", "language", "fr").status == 0)
        let store = try await PreferencesStore(fileURL: workspace.store)
        let change = try #require(store.snapshot.modification(forKey: "language"))
        #expect(change.program == "prefs")
        #expect(change.user == effectiveUserName())
    }

    @Test func aRecordThatDoesNotParseIsIgnoredAndTheValueKept() async throws {
        try write(
            """
            {"format": 1, "values": {"language": "fr", "volume": 3},
             "modified": {"language": 5, "volume": {"at": "2026-01-02T03:04:05.678Z", "by": "alice", "program": "ops"},
                          "gone": {"at": "2026-01-02T03:04:05Z", "by": "bob", "program": "ops"}}}
            """, to: url)
        let store = try await PreferencesStore(fileURL: url)
        #expect(store[.language] == "fr")
        #expect(store.snapshot.modification(forKey: "language") == nil)
        let volume = try #require(store.snapshot.modification(forKey: "volume"))
        #expect(volume.user == "alice" && volume.program == "ops")
        #expect(volume.description == "2026-01-02T03:04:05.678Z by alice using ops")
        // Records of keys that are not stored are dropped on the next write.
        try await store.set(.darkMode, true)
        #expect(!(contents(url) ?? "").contains("bob"))
        #expect((contents(url) ?? "").contains("alice"))
    }

    /// Entries with the same text share one record as read; a key listed
    /// twice takes its last entry, even one that is not a record.
    @Test func aRepeatedEntryTakesTheLastAndEqualTextsGiveEqualRecords() async throws {
        let record = #"{"at": "2026-01-02T03:04:05Z", "by": "alice", "program": "ops"}"#
        try write(
            """
            {"format": 1, "values": {"a": 1, "b": 2, "c": 3, "d": 4},
             "modified": {"a": \(record), "b": \(record), "c": \(record), "d": \(record),
                          "c": "later", "d": {"at": "2026-05-06T07:08:09Z", "by": "bob", "program": "x"}}}
            """, to: url)
        let store = try await PreferencesStore(fileURL: url)
        #expect(store.snapshot.modification(forKey: "a")?.user == "alice")
        #expect(
            store.snapshot.modification(forKey: "b") == store.snapshot.modification(forKey: "a"))
        #expect(store.snapshot.modification(forKey: "c") == nil)
        #expect(store.snapshot.modification(forKey: "d")?.user == "bob")
    }

    /// A syntax error inside the `modified` member is the file's corruption
    /// at open, named by line and column like any other.
    @Test func aSyntaxErrorInsideARecordIsCorruption() async throws {
        try write(
            """
            {"format": 1, "values": {"a": 1},
             "modified": {"a": {"at": "2026-01-02T03:04:05Z", "by": "alice" "program": "ops"}}}
            """, to: url)
        await #expect {
            _ = try await PreferencesStore(fileURL: url)
        } throws: { error in
            guard case PreferencesError.corrupted(_, let reason) = error else { return false }
            return reason
                == "not valid JSON: line 2, column 65: expected ',' or '}' in object, found '\"'"
        }
    }

    /// Many keys share one record (an import stamps them all), a few have
    /// their own, some have none: each keeps its own through a read, a write
    /// of one key and a read of the written file.
    @Test func keysKeepTheirOwnRecordsWhereMostShareOne() async throws {
        let common = #"{"at": "2026-01-02T03:04:05.678Z", "by": "alice", "program": "import"}"#
        let other = #"{"at": "2026-02-03T04:05:06.789Z", "by": "bob", "program": "ops"}"#
        var values: [String] = []
        var records: [String] = []
        for index in 0..<50 {
            values.append(#""k\#(index)": \#(index)"#)
            switch index % 10 {
            case 3: records.append(#""k\#(index)": \#(other)"#)
            case 7: break  // no record
            default: records.append(#""k\#(index)": \#(common)"#)
            }
        }
        try write(
            #"{"format": 1, "values": {\#(values.joined(separator: ","))}, "modified": {\#(records.joined(separator: ","))}}"#,
            to: url)
        func check(_ snapshot: PreferencesSnapshot, changed: String?) throws {
            for index in 0..<50 {
                let key = "k\(index)"
                let record = snapshot.modification(forKey: key)
                if key == changed {
                    #expect(record?.program == ProcessInfo.processInfo.processName, "\(key)")
                    continue
                }
                switch index % 10 {
                case 3: #expect(record?.user == "bob" && record?.program == "ops", "\(key)")
                case 7: #expect(record == nil, "\(key)")
                default: #expect(record?.user == "alice" && record?.program == "import", "\(key)")
                }
            }
        }
        let store = try await PreferencesStore(fileURL: url)
        try check(store.snapshot, changed: nil)
        try await store.edit { $0[raw: "k7"] = 700 }
        try check(store.snapshot, changed: "k7")
        let inFile = try fileSnapshot(url)
        try check(inFile, changed: "k7")
        #expect(inFile == store.snapshot)
        // Removing keys and setting one back leaves the others' records alone.
        try await store.edit { prefs in
            prefs.remove("k3")
            prefs.remove("k5")
        }
        try await store.edit { $0[raw: "k5"] = 5 }
        #expect(store.snapshot.modification(forKey: "k3") == nil)
        #expect(store.snapshot.modification(forKey: "k5")?.user == effectiveUserName())
        #expect(store.snapshot.modification(forKey: "k13")?.user == "bob")
        #expect(store.snapshot.modification(forKey: "k17") == nil)
        #expect(store.snapshot.modification(forKey: "k1")?.user == "alice")
    }

    /// Snapshots built by hand keep the records they are given, also for
    /// keys they do not store.
    @Test func aSnapshotBuiltByHandKeepsItsRecords() {
        let change = PreferenceModification(
            date: Date(timeIntervalSince1970: 1), user: "carol", program: "tests")
        let snapshot = PreferencesSnapshot(
            values: ["a": 1], modifications: ["a": change, "b": change])
        #expect(snapshot.modification(forKey: "a") == change)
        #expect(snapshot.modification(forKey: "b") == change)
        #expect(snapshot.modification(forKey: "c") == nil)
        #expect(snapshot != PreferencesSnapshot(values: ["a": 1], modifications: ["a": change]))
        #expect(
            snapshot
                == PreferencesSnapshot(values: ["a": 1], modifications: ["b": change, "a": change]))
    }

    @Test func sudoIsNamedBesideTheUser() {
        let change = PreferenceModification(
            date: Date(timeIntervalSince1970: 0), user: "root", sudoUser: "alice", program: "prefs")
        #expect(
            change.description == "1970-01-01T00:00:00.000Z by root (sudo from alice) using prefs")
        #expect(ChangeRecord(storedValue: change.jsonValue)?.modification == change)
    }
}
