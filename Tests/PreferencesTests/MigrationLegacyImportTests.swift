import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// An in-memory backend that notes, at each write, whether a legacy file
/// still exists, and can be told to fail its writes.
final class ObservedStorage: PreferencesStorage {
    let inner = InMemoryStorage()
    let watched: URL
    let failWrites: Bool
    private let seen = Locked<[Bool]>([])

    init(watching url: URL, failWrites: Bool = false) {
        watched = url
        self.failWrites = failWrites
    }

    /// For each write: whether the watched file existed when it happened.
    var legacyPresentAtWrites: [Bool] { seen.withLock { $0 } }

    var location: String { "observed" }
    var historyArchive: (any HistoryArchive)? { nil }
    var manifests: (any ManifestPublishing)? { nil }
    var replicas: (any ReplicaRegistry)? { nil }
    var privacy: (any StoragePrivacy)? { nil }
    func read() throws -> StoredContents { try inner.read() }
    func currentRevision() throws -> StorageRevision { try inner.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        let present = FileManager.default.fileExists(atPath: watched.path)
        seen.withLock { $0.append(present) }
        if failWrites {
            throw PreferencesError.io(
                operation: "write", path: location, code: 28, message: "No space left on device")
        }
        return try inner.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T { try body() }
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try inner.setAsideCorrupt(contents, stamp: stamp)
    }
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    { nil }
}

@Suite("Migration: legacy import", .scaledTimeLimit(minutes: 10))
struct MigrationLegacyImportTests {
    let directory: TemporaryDirectory
    let file: URL
    let legacy: URL

    init() throws {
        directory = try TemporaryDirectory()
        file = directory.file("settings.json")
        legacy = directory.file("app.properties")
    }

    var migrated: URL { URL(fileURLWithPath: legacy.path + ".migrated") }

    @Test func versionedStepsAndALegacyImportRunInOneOpen() async throws {
        try writeStore(["zoom": "14.5", "language": "de"], to: file)
        try write("app.dark_mode=true\napp.language=fr\napp.retries=3\nother.tool=x\n", to: legacy)
        let migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
            VersionedMigration(version: 2, .retype("map_zoom", as: .double)),
            LegacyImport(
                .properties, at: legacy, keys: .prefix("app.", removingPrefix: true),
                types: KeyTypes([.darkMode]).merging(["retries": .int])),
        ]
        do {
            let store = try await PreferencesStore(fileURL: file, migrations: migrations)
            #expect(
                store.snapshot.values == [
                    "map_zoom": 14.5, "dark_mode": true, "language": "de", "retries": 3,
                ])
            #expect(store.snapshot.version == 2)
        }
        #expect(!FileManager.default.fileExists(atPath: legacy.path))
        #expect(
            contents(migrated)
                == "app.dark_mode=true\napp.language=fr\napp.retries=3\nother.tool=x\n")

        // A second open changes nothing: not the bytes, not the mtime.
        let bytes = contents(file)
        let stamp = try identity(file)
        let again = try await PreferencesStore(fileURL: file, migrations: migrations)
        #expect(again[.mapZoom] == 14.5)
        #expect(contents(file) == bytes)
        #expect(try identity(file).modified == stamp.modified)
        #expect(try identity(file).inode == stamp.inode)
    }

    @Test func keysAlreadyStoredWinByDefault() async throws {
        try writeStore(["language": "de"], to: file)
        try write("language=fr\ntheme=dark\n", to: legacy)
        let store = try await PreferencesStore(
            fileURL: file, migrations: [LegacyImport(.properties, at: legacy)])
        #expect(store.snapshot.values == ["language": "de", "theme": "dark"])
    }

    @Test func overwriteReplacesStoredKeys() async throws {
        try writeStore(["language": "de", "kept": 1], to: file)
        try write("language=fr\ntheme=dark\n", to: legacy)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [LegacyImport(.properties, at: legacy, conflicts: .overwrite)])
        #expect(store.snapshot.values == ["language": "fr", "theme": "dark", "kept": 1])
    }

    @Test(
        "key selection",
        arguments: [
            (
                LegacyImport.KeySelection.all,
                ["app.a": "1", "app.b": "2", "app": "3", "sys.c": "4"]
            ),
            (.only(["app.a", "sys.c", "absent"]), ["app.a": "1", "sys.c": "4"]),
            (.prefix("app."), ["app.a": "1", "app.b": "2"]),
            (.prefix("app.", removingPrefix: true), ["a": "1", "b": "2"]),
            (.prefix("zzz"), [:]),
        ] as [(LegacyImport.KeySelection, [String: PreferenceValue])])
    func selection(keys: LegacyImport.KeySelection, expected: [String: PreferenceValue])
        async throws
    {
        try write("app.a=1\napp.b=2\napp=3\nsys.c=4\n", to: legacy)
        let store = try await PreferencesStore(
            fileURL: file, migrations: [LegacyImport(.properties, at: legacy, keys: keys)])
        #expect(store.snapshot.values == expected)
        #expect(!FileManager.default.fileExists(atPath: legacy.path))
    }

    @Test func renamesAreKeyedByTheSourceNameAndTypesByTheStoredName() async throws {
        try write("app.zoom=14.5\napp.dark=yes\napp.lang=fr\n", to: legacy)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                LegacyImport(
                    .properties, at: legacy, keys: .prefix("app.", removingPrefix: true),
                    renames: ["app.zoom": "map_zoom", "app.dark": "dark_mode"],
                    types: [.mapZoom, .darkMode])
            ])
        #expect(store.snapshot.values == ["map_zoom": 14.5, "dark_mode": true, "lang": "fr"])
        #expect(store[.mapZoom] == 14.5)
    }

    @Test func twoSourceKeysForOneStoredKeyAreAnError() async throws {
        try write("app.y=1\nx=2\n", to: legacy)
        let error = await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(
                fileURL: file,
                migrations: [
                    LegacyImport(.properties, at: legacy, renames: ["app.y": "x"])
                ])
        }
        #expect(
            error?.description.contains("'app.y' and 'x' would both be imported as 'x'") == true)
    }

    @Test(
        "a value that does not fit its declared type fails, naming file, key and value",
        arguments: [
            ("zoom=fourteen\n", KeyTypes(["zoom": .double]), "zoom", "\"fourteen\""),
            ("dark_mode=maybe\n", [.darkMode], "dark_mode", "\"maybe\""),
            ("counter=1.5\n", [.counter], "counter", "\"1.5\""),
        ] as [(String, KeyTypes, String, String)])
    func typingError(text: String, types: KeyTypes, key: String, value: String) async throws {
        try writeStore(["kept": 1], to: file)
        try write(text, to: legacy)
        let before = contents(file)
        let error = await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(
                fileURL: file,
                migrations: [
                    VersionedMigration(version: 1, .rename("kept", to: "moved")),
                    LegacyImport(.properties, at: legacy, types: types),
                ])
        }
        let message = try #require(error?.description)
        #expect(message.hasPrefix(legacy.path + ": "))
        #expect(message.contains("'\(key)'"))
        #expect(message.contains(value))
        #expect(contents(file) == before)
        #expect(contents(legacy) == text)
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
    }

    @Test func aMalformedSourceFailsWithFileLineAndColumnAndTouchesNothing() async throws {
        let source = directory.file("old.json")
        let text = "{\n  \"a\": 1,\n  \"b\": tru\n}\n"
        try write(text, to: source)
        try writeStore(["kept": 1], to: file)
        let before = contents(file)
        let migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1, .rename("kept", to: "moved")),
            LegacyImport(.json, at: source),
        ]
        let error = await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(fileURL: file, migrations: migrations)
        }
        guard case .legacyFormat(let path, let line, let column, _) = try #require(error) else {
            Issue.record("expected a legacy format error, got \(String(describing: error))")
            return
        }
        #expect(path == source.path)
        // `  "b": tru`: the literal that is not one starts at column 8.
        #expect(line == 3)
        #expect(column == 8)
        #expect(contents(file) == before)
        #expect(contents(source) == text)

        // Fixed, the next open retries and completes.
        try write("{\"a\": 1, \"b\": true}", to: source)
        let store = try await PreferencesStore(fileURL: file, migrations: migrations)
        #expect(store.snapshot.values == ["moved": 1, "a": 1, "b": true])
        #expect(!FileManager.default.fileExists(atPath: source.path))
    }

    @Test func aMissingSourceIsNothingToDo() async throws {
        let store = try await PreferencesStore(
            fileURL: file, migrations: [LegacyImport(.properties, at: legacy)])
        #expect(store.snapshot.values.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func theSourceIsRenamedOnlyAfterTheWrite() async throws {
        try write("a=1\n", to: legacy)
        let storage = ObservedStorage(watching: legacy)
        let store = try await PreferencesStore(
            storage: storage, migrations: [LegacyImport(.properties, at: legacy)])
        #expect(store.snapshot.values == ["a": "1"])
        #expect(storage.legacyPresentAtWrites == [true])
        #expect(!FileManager.default.fileExists(atPath: legacy.path))
        #expect(contents(migrated) == "a=1\n")
    }

    @Test func aFailedWriteLeavesTheSourceInPlace() async throws {
        try write("a=1\n", to: legacy)
        let storage = ObservedStorage(watching: legacy, failWrites: true)
        await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(
                storage: storage, migrations: [LegacyImport(.properties, at: legacy)])
        }
        #expect(storage.legacyPresentAtWrites == [true])
        #expect(contents(legacy) == "a=1\n")
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
    }

    @Test func aSourceWhoseKeysAreAllStoredIsStillCleanedUp() async throws {
        // What a rerun sees after a crash between the write and the clean-up.
        try writeStore(["a": "1"], to: file)
        try write("a=1\n", to: legacy)
        let bytes = contents(file)
        let stamp = try identity(file)
        _ = try await PreferencesStore(
            fileURL: file, migrations: [LegacyImport(.properties, at: legacy)])
        #expect(contents(file) == bytes)
        #expect(try identity(file).modified == stamp.modified)
        #expect(!FileManager.default.fileExists(atPath: legacy.path))
        #expect(FileManager.default.fileExists(atPath: migrated.path))
    }

    @Test func aVersionedImportAfterItsVersionOnlyCleansUp() async throws {
        // Imported at version 1, then renamed at version 2; a leftover source
        // (a crash before the clean-up) must not bring the old key back.
        let migrations: [any PreferencesMigration] = [
            LegacyImport(.properties, at: legacy, version: 1),
            VersionedMigration(version: 2, .rename("zoom", to: "map_zoom")),
        ]
        try writeStore(["map_zoom": "3"], version: 2, to: file)
        try write("zoom=3\n", to: legacy)
        let store = try await PreferencesStore(fileURL: file, migrations: migrations)
        #expect(store.snapshot.values == ["map_zoom": "3"])
        #expect(!FileManager.default.fileExists(atPath: legacy.path))
    }

    @Test func sharedPrefsAndItsBackupAreBothRenamed() async throws {
        let xml = directory.file("prefs.xml")
        let backup = directory.file("prefs.xml.bak")
        try write(
            "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n<boolean name=\"dark_mode\" value=\"false\" />\n</map>\n",
            to: xml)
        try write(
            "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n<boolean name=\"dark_mode\" value=\"true\" />\n<float name=\"map_zoom\" value=\"12.5\" />\n</map>\n",
            to: backup)
        let store = try await PreferencesStore(
            fileURL: file, migrations: [LegacyImport(.sharedPrefs, at: xml)])
        #expect(store[.darkMode] == true)
        #expect(store[.mapZoom] == 12.5)
        #expect(!FileManager.default.fileExists(atPath: xml.path))
        #expect(!FileManager.default.fileExists(atPath: backup.path))
        #expect(FileManager.default.fileExists(atPath: xml.path + ".migrated"))
        #expect(FileManager.default.fileExists(atPath: backup.path + ".migrated"))
    }

    @Test func aUserDefaultsPlistWithAListOfKeys() async throws {
        let plist = directory.file("com.example.app.plist")
        try write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>NSWindow Frame main</key><string>0 0 800 600</string>
                <key>DarkMode</key><true/>
                <key>Zoom</key><real>15</real>
            </dict>
            </plist>
            """, to: plist)
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                LegacyImport(
                    .plist, at: plist, keys: .only(["DarkMode", "Zoom"]),
                    renames: ["DarkMode": "dark_mode", "Zoom": "map_zoom"], afterImport: .remove)
            ])
        #expect(store.snapshot.values == ["dark_mode": true, "map_zoom": 15.0])
        #expect(!FileManager.default.fileExists(atPath: plist.path))
        #expect(!FileManager.default.fileExists(atPath: plist.path + ".migrated"))
    }

    @Test(arguments: [LegacyImport.SourceCleanUp.rename, .remove])
    func anEnvdirDirectoryIsCleanedUp(afterImport: LegacyImport.SourceCleanUp) async throws {
        let env = directory.file("env")
        try FileManager.default.createDirectory(at: env, withIntermediateDirectories: true)
        try write("fr\n", to: env.appendingPathComponent("LANGUAGE"))
        try write("1\n", to: env.appendingPathComponent("DEBUG"))
        let store = try await PreferencesStore(
            fileURL: file,
            migrations: [
                LegacyImport(
                    .envdir, at: env, renames: ["LANGUAGE": "language"], types: ["DEBUG": .bool],
                    afterImport: afterImport)
            ])
        #expect(store.snapshot.values == ["language": "fr", "DEBUG": true])
        #expect(!FileManager.default.fileExists(atPath: env.path))
        #expect(
            FileManager.default.fileExists(atPath: env.path + ".migrated")
                == (afterImport == .rename))
    }

    @Test func skippedEnvdirEntriesAreReportedAsProblems() async throws {
        let env = directory.file("env")
        try FileManager.default.createDirectory(
            at: env.appendingPathComponent("nested"), withIntermediateDirectories: true)
        try write("fr\n", to: env.appendingPathComponent("LANGUAGE"))
        try write("x\n", to: env.appendingPathComponent("A=B"))
        let store = try await PreferencesStore(
            fileURL: file, migrations: [LegacyImport(.envdir, at: env)])
        #expect(store.snapshot.values == ["LANGUAGE": "fr"])
        let messages = store.problems.map(\.message)
        #expect(messages.count == 2)
        #expect(messages.contains { $0.contains("nested") && $0.contains("directory") })
        #expect(messages.contains { $0.contains("A=B") })
    }
}
