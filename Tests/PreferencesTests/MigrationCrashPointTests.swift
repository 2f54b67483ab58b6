import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// A migration killed (SIGKILL) at each named moment, on purpose rather than
/// by chance: `prefs-harness migrate` with `PREFS_HARNESS_CRASH_AT` kills
/// itself there. After the kill the store and the legacy source are in the
/// state that moment implies, and a rerun ends in the same state as a
/// migration never interrupted.
@Suite(
    "Migration: named crash points", .serialized, .takesTurns(.processes),
    .scaledTimeLimit(minutes: 10))
struct MigrationCrashPointTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let point: String
        let cleanUp: LegacyImport.SourceCleanUp
        /// Whether the kill comes after the migrated file is durable.
        let committed: Bool
        var testDescription: String { "\(point), then \(cleanUp)" }
    }

    static let cases: [Case] = [
        Case(point: "before-commit", cleanUp: .rename, committed: false),
        Case(point: "before-commit", cleanUp: .remove, committed: false),
        Case(point: "between-commit-and-clean-up", cleanUp: .rename, committed: true),
        Case(point: "between-commit-and-clean-up", cleanUp: .remove, committed: true),
    ]

    @Test(arguments: cases) func killedAtANamedPoint(_ testCase: Case) async throws {
        let parent = try TemporaryDirectory()

        // What an uninterrupted migration produces.
        let reference = try MigrationCrashTests.Case(in: parent.url, index: 0)
        let original = try #require(contents(reference.file))
        _ = try await PreferencesStore(
            fileURL: reference.file,
            migrations: MigrationCrashTests.migrations(
                legacy: reference.legacy, cleanUp: testCase.cleanUp))
        let final = try #require(contents(reference.file))
        #expect(
            withoutChangeRecords(final)
                != withoutChangeRecords(original))

        let run = try MigrationCrashTests.Case(in: parent.url, index: 1)
        var environment = cleanEnvironment()
        environment["PREFS_HARNESS_CRASH_AT"] = testCase.point
        let child = try RunningProcess(
            "prefs-harness",
            [
                "migrate", run.file.path, run.legacy.path,
                testCase.cleanUp == .remove ? "remove" : "rename",
            ],
            environment: environment)
        try await child.lines.expectLine("opening")
        #expect(try await child.nextLine() == nil, "it printed: \(child.transcript)")
        _ = try await child.exit()
        // It died of SIGKILL at that point, never reaching "done".
        #expect(child.process.terminationReason == .uncaughtSignal)
        #expect(child.process.terminationStatus == SIGKILL)

        // The store holds exactly the old or the new state, as the point implies,
        // and the source is untouched either way.
        #expect(
            withoutChangeRecords(contents(run.file))
                == withoutChangeRecords(testCase.committed ? final : original))
        #expect(contents(run.legacy) == MigrationCrashTests.legacyText)
        #expect(!FileManager.default.fileExists(atPath: run.migrated.path))

        // The rerun (the same migrations, no crash) ends where an
        // uninterrupted migration ends, with the source cleaned up.
        let store = try await PreferencesStore(
            fileURL: run.file,
            migrations: MigrationCrashTests.migrations(
                legacy: run.legacy, cleanUp: testCase.cleanUp))
        #expect(store.problems.isEmpty, "\(store.problems)")
        #expect(
            withoutChangeRecords(contents(run.file))
                == withoutChangeRecords(final))
        #expect(!FileManager.default.fileExists(atPath: run.legacy.path))
        if testCase.cleanUp == .rename {
            #expect(contents(run.migrated) == MigrationCrashTests.legacyText)
        } else {
            #expect(!FileManager.default.fileExists(atPath: run.migrated.path))
        }
    }

    @Test func anUnknownCrashPointIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let run = try MigrationCrashTests.Case(in: directory.url, index: 0)
        var environment = cleanEnvironment()
        environment["PREFS_HARNESS_CRASH_AT"] = "before-comit"
        let output = try await runChild(
            "prefs-harness", ["migrate", run.file.path, run.legacy.path],
            environment: environment)
        #expect(output.status == 2)
        #expect(output.standardError.contains("before-comit"))
        #expect(contents(run.legacy) == MigrationCrashTests.legacyText)
    }
}
