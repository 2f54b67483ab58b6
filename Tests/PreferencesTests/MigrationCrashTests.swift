import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(
    "Migration: crash safety", .serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 30))
struct MigrationCrashTests {
    /// The list `prefs-harness migrate` runs; the rerun uses the same one.
    static func migrations(
        legacy: URL, cleanUp: LegacyImport.SourceCleanUp = .rename
    ) -> [any PreferencesMigration] {
        [
            VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
            VersionedMigration(version: 2, .retype("map_zoom", as: .double)),
            LegacyImport(
                .properties, at: legacy, keys: .prefix("app.", removingPrefix: true),
                types: ["dark_mode": .bool], afterImport: cleanUp),
        ]
    }

    static let legacyText: String = {
        var text = "# written by the old app\napp.dark_mode=true\napp.language=fr\nother.tool=x\n"
        for index in 0..<1500 { text += "app.setting_\(index)=value \(index)\n" }
        return text
    }()

    struct Case {
        let directory: URL
        var file: URL { directory.appendingPathComponent("settings.json") }
        var legacy: URL { directory.appendingPathComponent("app.properties") }
        var migrated: URL { directory.appendingPathComponent("app.properties.migrated") }

        init(in parent: URL, index: Int) throws {
            directory = parent.appendingPathComponent("run-\(index)")
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true)
            try writeStore(["zoom": "2.5", "language": "de"], to: file)
            try write(MigrationCrashTests.legacyText, to: legacy)
        }
    }

    /// Invariants that hold wherever a kill lands.
    @Test func killedAtRandomMomentsARerunEndsInTheSameStateWithNothingLost() async throws {
        let parent = try TemporaryDirectory()

        // The state a migration that is never interrupted produces.
        let reference = try Case(in: parent.url, index: -1)
        let original = try #require(withoutChangeRecords(contents(reference.file)))
        _ = try await PreferencesStore(
            fileURL: reference.file, migrations: Self.migrations(legacy: reference.legacy))
        let final = try #require(withoutChangeRecords(contents(reference.file)))
        #expect(final.contains("\"setting_1499\":\"value 1499\""))
        #expect(final.contains("\"language\":\"de\""))
        #expect(final.contains("\"map_zoom\":2.5"))

        // How long a whole child run takes (start to exit, measured by the
        // clock rather than by when its lines are read, which a busy machine
        // delays), to spread the kills over it.
        let calibration = try Case(in: parent.url, index: -2)
        let started = ContinuousClock.now
        let child = try RunningProcess(
            "prefs-harness", ["migrate", calibration.file.path, calibration.legacy.path])
        #expect(try await child.nextLine() == "opening")
        #expect(try await child.nextLine() == "done")
        #expect(try await child.exit() == 0)
        let window = ContinuousClock.now - started
        // At most 3 s: on a machine loaded by the rest of the suite one run
        // can take far longer, and the kills would then all land late.
        let windowMicroseconds = min(
            3_000_000,
            max(
                2_000,
                Int(window.components.attoseconds / 1_000_000_000_000)
                    + Int(window.components.seconds) * 1_000_000))

        var beforeCommit = 0
        var betweenCommitAndCleanUp = 0
        var afterCleanUp = 0
        // PREFS_RELIABILITY_SEED=<seed> repeats a run's kill moments.
        var generator = SeededGenerator(state: Reliability.seed)
        // 25 kills by default (the named crash points cover the cases that must
        // be hit); `PREFS_MIGRATION_KILLS` asks for more, as the reliability
        // harness does.
        let kills =
            ProcessInfo.processInfo.environment["PREFS_MIGRATION_KILLS"].flatMap { Int($0) } ?? 25
        for index in 0..<kills {
            let run = try Case(in: parent.url, index: index)
            let process = try RunningProcess(
                "prefs-harness", ["migrate", run.file.path, run.legacy.path])
            #expect(try await process.nextLine() == "opening")
            try await Task.sleep(
                for: .microseconds(
                    Int.random(in: 0...(windowMicroseconds * 3 / 2), using: &generator)))
            process.kill()
            _ = try await process.exit()

            // After the kill: the store holds the old or the new state, the
            // source is in exactly one place, and it is gone only if its data
            // is in the store.
            let stored = withoutChangeRecords(contents(run.file))
            #expect(
                stored == original || stored == final,
                "run \(index) (seed \(Reliability.seed)): a half-migrated store")
            let sourcePresent = FileManager.default.fileExists(atPath: run.legacy.path)
            let sourceMoved = FileManager.default.fileExists(atPath: run.migrated.path)
            #expect(
                sourcePresent != sourceMoved, "run \(index): the source is in both or neither place"
            )
            if !sourcePresent {
                #expect(
                    stored == final,
                    "run \(index) (seed \(Reliability.seed)): the source went before its data was stored"
                )
            }
            switch (stored == final, sourcePresent) {
            case (false, _): beforeCommit += 1
            case (true, true): betweenCommitAndCleanUp += 1
            case (true, false): afterCleanUp += 1
            }

            // The rerun ends in the same state as an uninterrupted migration.
            do {
                _ = try await PreferencesStore(
                    fileURL: run.file, migrations: Self.migrations(legacy: run.legacy))
            }
            #expect(
                withoutChangeRecords(contents(run.file)) == final,
                "run \(index) (seed \(Reliability.seed)): the rerun ended elsewhere")
            #expect(!FileManager.default.fileExists(atPath: run.legacy.path))
            #expect(contents(run.migrated) == Self.legacyText)
            try FileManager.default.removeItem(at: run.directory)
        }
        print(
            "migration kills: \(beforeCommit) before the commit, \(betweenCommitAndCleanUp) between commit and clean-up, \(afterCleanUp) after; window \(windowMicroseconds) µs; seed \(Reliability.seed)"
        )
        // Where random kills land depends on the machine's speed, so nothing
        // here asserts it: the named moments are each hit on purpose by
        // MigrationCrashPointTests.
    }
}
