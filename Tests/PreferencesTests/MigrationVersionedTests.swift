import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Writes a store file by hand, as an older version of an app left it.
func writeStore(_ values: [String: PreferenceValue], version: Int = 0, to url: URL) throws {
    var document: [String: PreferenceValue] = ["format": 1, "values": .object(values)]
    if version != 0 { document["version"] = .int(Int64(version)) }
    try write(PreferenceValue.object(document).jsonText, to: url)
}

/// Counts how often a closure step ran, across the store's queue.
final class RunCounter: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

@Suite("Migration: versioned steps", .scaledTimeLimit(minutes: 10))
struct MigrationVersionedTests {
    let directory: TemporaryDirectory
    let file: URL

    init() throws {
        directory = try TemporaryDirectory()
        file = directory.file("settings.json")
    }

    @Test func twoStepsRunInOrderAndRecordTheHighestVersion() async throws {
        try writeStore(["zoom": "14.5", "language": "fr"], to: file)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
                VersionedMigration(version: 2, .retype("map_zoom", as: .double)),
            ])
        #expect(store[.mapZoom] == 14.5)
        #expect(store.snapshot.values["map_zoom"] == .double(14.5))
        #expect(store.snapshot.values["zoom"] == nil)
        #expect(store.snapshot.version == 2)
        #expect(contents(file)?.contains("\"version\" : 2") == true)
    }

    @Test func stepsAtOrBelowTheStoredVersionDoNotRun() async throws {
        try writeStore(["zoom": 3], version: 1, to: file)
        let first = RunCounter()
        let second = RunCounter()
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                VersionedMigration(version: 1) { _ in first.increment() },
                VersionedMigration(version: 2) { prefs in
                    second.increment()
                    prefs[raw: "seen"] = true
                },
            ])
        #expect(first.value == 0)
        #expect(second.value == 1)
        #expect(store.snapshot.version == 2)
        #expect(store.snapshot.values["seen"] == .bool(true))
    }

    @Test func aSecondOpenRunsNothingAndLeavesTheFileAlone() async throws {
        try writeStore(["zoom": "2"], to: file)
        let counter = RunCounter()
        let migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
            VersionedMigration(version: 2) { prefs in
                counter.increment()
                prefs[raw: "map_zoom"] = ValueConversion.double.convert(
                    prefs[raw: "map_zoom"] ?? 0)
            },
        ]
        do { _ = try await PreferencesStore(fileURL: file, migrations: migrations) }
        let bytes = contents(file)
        let stamp = try identity(file)
        do {
            let again = try await PreferencesStore(fileURL: file, migrations: migrations)
            #expect(again[.mapZoom] == 2)
        }
        #expect(counter.value == 1)
        #expect(contents(file) == bytes)
        let after = try identity(file)
        #expect(after.inode == stamp.inode && after.modified == stamp.modified)
    }

    @Test func aFreshFileIsWrittenWithTheVersionOnly() async throws {
        let store = try await PreferencesStore(
            fileURL: file, migrations: [VersionedMigration(version: 3, .rename("a", to: "b"))])
        #expect(store.snapshot.version == 3)
        #expect(store.snapshot.values.isEmpty)
        let text = try #require(contents(file))
        #expect(text.contains("\"version\" : 3"))
    }

    @Test func splitMergeRemoveAndEditSteps() async throws {
        try writeStore(
            [
                "window": "800x600", "first": "Ada", "last": "Lovelace", "obsolete": 1,
                "launches": 4,
            ],
            to: file)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                VersionedMigration(
                    version: 1,
                    .split("window") { value in
                        guard case .string(let text) = value else { return [:] }
                        let parts = text.split(separator: "x").compactMap { Int64($0) }
                        return ["window_width": .int(parts[0]), "window_height": .int(parts[1])]
                    },
                    .merge(["first", "last"], into: "name") { parts in
                        let words = ["first", "last"].compactMap { key -> String? in
                            if case .string(let word) = parts[key] { return word }
                            return nil
                        }
                        return .string(words.joined(separator: " "))
                    },
                    .remove("obsolete", "never_stored"),
                    .edit("count from zero") { prefs in
                        prefs[.counter] = prefs[raw: "launches"] == 4 ? 3 : -1
                    },
                    .remove("launches"))
            ])
        #expect(
            store.snapshot.values == [
                "window_width": 800, "window_height": 600, "name": "Ada Lovelace", "counter": 3,
            ])
    }

    @Test func stepsOnKeysThatAreNotStoredDoNothing() async throws {
        try writeStore(["kept": "x"], to: file)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                VersionedMigration(
                    version: 1, .rename("a", to: "b"), .retype("c", as: .int),
                    .split("d") { _ in ["e": 1] },
                    .merge(["f", "g"], into: "h") { _ in 1 })
            ])
        #expect(store.snapshot.values == ["kept": "x"])
        #expect(store.snapshot.version == 1)
    }

    @Test(
        "retype converts strings and numbers",
        arguments: [
            (
                PreferenceValue.string("14.5"), ValueConversion.double,
                PreferenceValue.double(14.5)
            ),
            ("-3", .double, .double(-3)),
            (7, .double, .double(7)),
            ("true", .bool, .bool(true)),
            (" NO ", .bool, .bool(false)),
            (1, .bool, .bool(true)),
            ("42", .int, .int(42)),
            ("4.0", .int, .int(4)),
            (4.0, .int, .int(4)),
            (3, .string, .string("3")),
            (true, .string, .string("true")),
            ("[1,2]", .json, .array([1, 2])),
            ("dark", .string, .string("dark")),
        ])
    func retypeConverts(
        stored: PreferenceValue, type: ValueConversion, expected: PreferenceValue
    )
        async throws
    {
        try writeStore(["key": stored], to: file)
        let store = try await PreferencesStore(
            fileURL: file, migrations: [VersionedMigration(version: 1, .retype("key", as: type))])
        #expect(store.snapshot.values["key"] == expected)
    }

    @Test func retypeToATypedKeysType() async throws {
        try writeStore(["map_zoom": "3", "dark_mode": "on", "theme": "dark"], to: file)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                VersionedMigration(
                    version: 1, .retype(PreferenceKeys.mapZoom), .retype(PreferenceKeys.darkMode),
                    .retype(PreferenceKeys.theme))
            ])
        #expect(store.snapshot.values["map_zoom"] == .double(3))
        #expect(store[.darkMode] == true)
        #expect(store[.theme] == .dark)
    }

    @Test(
        "a value that does not convert fails the open, naming the key and the value",
        arguments: [
            (PreferenceValue.string("abc"), ValueConversion.double),
            ("maybe", .bool),
            ("4.5", .int),
            ("0x10", .int),
            (.array([1]), .string),
        ])
    func retypeFailure(stored: PreferenceValue, type: ValueConversion) async throws {
        try writeStore(["zoom": stored, "other": 1], to: file)
        let before = contents(file)
        let error = await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(
                fileURL: file,
                migrations: [
                    VersionedMigration(version: 1, .rename("other", to: "renamed")),
                    VersionedMigration(version: 2, .retype("zoom", as: type)),
                ])
        }
        let message = try #require(error).description
        #expect(message.contains("'zoom'"))
        #expect(message.contains(stored.jsonText))
        #expect(message.contains("version 2"))
        #expect(contents(file) == before)
    }

    @Test func aThrowingStepWritesNothingAndTheNextOpenRetries() async throws {
        struct Broken: Error, CustomStringConvertible {
            var description: String { "the server list is empty" }
        }
        try writeStore(["zoom": "1"], to: file)
        let before = contents(file)
        let error = await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(
                fileURL: file,
                migrations: [
                    VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
                    VersionedMigration(version: 2, name: "servers") { _ in throw Broken() },
                ])
        }
        #expect(error?.description == "migration 'servers: edit' failed: the server list is empty")
        #expect(contents(file) == before)

        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
                VersionedMigration(version: 2, name: "servers") { prefs in
                    prefs[raw: "servers"] = []
                },
            ])
        #expect(store.snapshot.values == ["map_zoom": "1", "servers": []])
        #expect(store.snapshot.version == 2)
    }

    @Test func aStepThatStoresAnInvalidKeyFailsNamingIt() async throws {
        try writeStore(["a": 1], to: file)
        let error = await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(
                fileURL: file, migrations: [VersionedMigration(version: 1, .rename("a", to: ""))])
        }
        #expect(error?.description.contains("rename 'a' to ''") == true)
        #expect(error?.description.contains("keys may not be empty") == true)
    }
}

/// A step whose check lets another program spoil the file first: the step
/// then reads it under exclusive access, after the open's own read.
private struct SpoiledBeforeItRuns: PreferencesMigration {
    let file: URL
    let spoiled = Locked(false)

    func shouldMigrate(_ current: PreferencesSnapshot) throws -> Bool {
        let first = spoiled.withLock { spoiled in
            defer { spoiled = true }
            return !spoiled
        }
        if first { try write("garbage", to: file) }
        return current.version < 1
    }

    func migrate(_ preferences: inout MutablePreferences) throws {
        preferences[.language] = "de"
        preferences.version = 1
    }
}

extension MigrationVersionedTests {
    /// A second handle's open runs its migrations under its own corruption
    /// policy, as it reads the file: not under the policy of the handle
    /// already open.
    @Test func aMigrationReadsUnderThePolicyOfTheOpenThatRunsIt() async throws {
        try writeStore(["counter": 3], to: file)
        let first = try await PreferencesStore(fileURL: file, corruption: .fail)
        #expect(first[.counter] == 3)
        let second = try await PreferencesStore(
            fileURL: file, migrations: [SpoiledBeforeItRuns(file: file)],
            corruption: .backupAndReset)
        #expect(second[.language] == "de")
        #expect(second[.counter] == 0, "the spoiled file was read as a store")
        #expect(first[.language] == "de")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let moved = try #require(names.first { $0.hasPrefix("settings.json.corrupt-") })
        #expect(try String(contentsOf: directory.file(moved), encoding: .utf8) == "garbage")
    }
}
