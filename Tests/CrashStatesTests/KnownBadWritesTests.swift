import Foundation
import Preferences
import PreferencesTestSupport
import Testing

@testable import CrashStates

/// The explorer fed records of known-bad writes: the state builder must
/// build the state a power cut may leave, and the checker must report it.
/// Serialized: recording takes every call the process makes.
@Suite(.serialized, .takesTurns(.diskRecorder))
struct KnownBadWritesTests {
    /// The `set` workload's directory before its run, and the document its
    /// run writes there.
    struct Before {
        let directory: TemporaryDirectory
        let root: String
        let initial: FileTree
        let written: [UInt8]
    }

    func before() async throws -> Before {
        let directory = try TemporaryDirectory()
        try await Workload.set.setup(directory.path)
        let initial = try FileTree.read(directory.path)
        let copy = try TemporaryDirectory()
        try initial.write(to: copy.path + "/run")
        try await Workload.set.run(copy.path + "/run")
        let written = try #require(
            try FileTree.read(copy.path + "/run").entries["prefs.json"]?.bytes)
        return Before(
            directory: directory, root: try realPath(directory.path), initial: initial,
            written: written)
    }

    /// The replace of `prefs.json` with `written`, by hand: a temporary file
    /// created and written, fsynced when `syncData`, renamed over the file,
    /// its directory fsynced when `syncDirectory`, then acknowledged.
    func replace(_ before: Before, syncData: Bool, syncDirectory: Bool) -> [DiskOperation] {
        // Named as the library names its temporary files (12 random
        // characters), which the next write sweeps.
        let temporary = before.root + "/.prefs.json.byhand123456.tmp"
        var calls: [DiskOperation] = [
            .create(path: temporary, mode: 0o600),
            .write(path: temporary, offset: 0, bytes: before.written),
        ]
        if syncData { calls.append(.sync(path: temporary)) }
        calls.append(.rename(from: temporary, to: before.root + "/prefs.json"))
        if syncDirectory { calls.append(.syncDirectory(path: before.root)) }
        calls.append(.mark("ack"))
        return calls
    }

    /// A state the checker reported: after which call, how many writes had
    /// returned, and what it found.
    struct Reported {
        var point: Int
        var acknowledged: Int
        var violations: [Violation]
    }

    /// Every state `model` allows after every call of `record`, each
    /// opened by the checker (in this process) in a directory of its own.
    func reported(_ record: BrokenRecord, _ model: PersistenceModel, _ workload: Workload)
        async throws -> [Reported]
    {
        let builder = CrashStateBuilder(record: record, model: model)
        var reported: [Reported] = []
        for point in -1..<record.calls.count {
            let acknowledged = record.acknowledged[point + 1]
            for state in builder.states(after: point) {
                let place = try TemporaryDirectory()
                try state.tree.write(to: place.path + "/state")
                let violations = await Checker.check(
                    workload, directory: place.path + "/state", acknowledged: acknowledged)
                if !violations.isEmpty {
                    reported.append(
                        Reported(point: point, acknowledged: acknowledged, violations: violations))
                }
            }
        }
        return reported
    }

    @Test func theCorrectReplaceShowsNoViolation() async throws {
        let before = try await before()
        let record = try BrokenRecord(
            calls: replace(before, syncData: true, syncDirectory: true), root: before.root,
            initial: before.initial)
        for model in PersistenceModel.allCases {
            let reported = try await reported(record, model, .set)
            #expect(reported.isEmpty, "\(model): \(reported.map(\.violations))")
        }
    }

    @Test func aRenameBeforeTheDataIsSyncedIsReportedUnderPOSIX() async throws {
        let before = try await before()
        let record = try BrokenRecord(
            calls: replace(before, syncData: false, syncDirectory: true), root: before.root,
            initial: before.initial)
        let reported = try await reported(record, .posix, .set)
        // After the write returned, the renamed file may hold none of its data.
        let afterAcknowledgement = reported.filter { $0.acknowledged == 1 }
        #expect(!afterAcknowledgement.isEmpty)
        let invariants = Set(afterAcknowledgement.flatMap(\.violations).map(\.invariant))
        #expect(
            !invariants.isDisjoint(with: [Violation.opens, Violation.oldOrNew]),
            "reported: \(invariants)")
        // ext4's replace-via-rename commits the data with the rename.
        #expect(try await self.reported(record, .ext4, .set).isEmpty)
    }

    @Test func anAcknowledgedWriteWhoseDirectoryWasNeverSyncedIsReported() async throws {
        let before = try await before()
        let record = try BrokenRecord(
            calls: replace(before, syncData: true, syncDirectory: false), root: before.root,
            initial: before.initial)
        for model in PersistenceModel.allCases {
            let reported = try await reported(record, model, .set)
            let lost = reported.filter {
                $0.acknowledged == 1
                    && $0.violations.contains { $0.invariant == Violation.acknowledgedWrite }
            }
            #expect(!lost.isEmpty, "\(model): \(reported.map(\.violations))")
        }
    }

    @Test func theRecordedSetShowsNoViolationAndIsNotEmpty() async throws {
        let directory = try TemporaryDirectory()
        let record = try await Explorer.record(
            .set, in: directory.path + "/run", besideOtherWork: true)
        #expect(record.barriers.values.contains { !$0.isEmpty })
        #expect(
            record.micro.contains {
                if case .rename(_, "prefs.json", true, _) = $0.kind { return true }
                return false
            })
        #expect(try await reported(record, .posix, .set).isEmpty)
    }

    /// A shared-prefs file cut short beside the `.bak` that holds its
    /// values, both renamed to `.migrated` after the import: in no state
    /// is the cut file read once its `.bak` is gone.
    @Test func theRecordedBackupImportShowsNoViolation() async throws {
        let directory = try TemporaryDirectory()
        let record = try await Explorer.record(
            .legacyBackup, in: directory.path + "/run", besideOtherWork: true)
        #expect(
            record.micro.contains {
                if case .rename("old/app.xml.bak", "old/app.xml.bak.migrated", _, _) = $0.kind {
                    return true
                }
                return false
            })
        let reported = try await reported(record, .posix, .legacyBackup)
        #expect(reported.isEmpty, "\(reported.map(\.violations))")
    }

    @Test func aDirectoryReachedThroughALinkIsRecordedWhole() async throws {
        let real = try TemporaryDirectory()
        let links = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(
            atPath: links.path + "/link", withDestinationPath: real.path)
        let record = try await Explorer.record(
            .set, in: links.path + "/link/run", besideOtherWork: true)
        #expect(record.root == (try realPath(real.path)) + "/run")
        #expect(
            record.micro.contains {
                if case .rename(_, "prefs.json", true, _) = $0.kind { return true }
                return false
            })
    }

    @Test func aCallOutsideTheWorkloadFailsNamingIt() async throws {
        let before = try await before()
        var calls = replace(before, syncData: true, syncDirectory: true)
        calls.insert(.unlink(path: "/elsewhere/prefs.json"), at: 1)
        let error = #expect(throws: ExplorerError.self) {
            try BrokenRecord(calls: calls, root: before.root, initial: before.initial)
        }
        #expect(error?.description.contains("call #1, unlink /elsewhere/prefs.json") == true)
        #expect(error?.description.contains("outside the workload's directory") == true)
    }

    @Test func aCallOnAFileTheReplayDoesNotKnowFailsNamingIt() async throws {
        let before = try await before()
        var calls = replace(before, syncData: true, syncDirectory: true)
        calls.insert(.sync(path: before.root + "/never-made"), at: 0)
        let error = #expect(throws: ExplorerError.self) {
            try BrokenRecord(calls: calls, root: before.root, initial: before.initial)
        }
        #expect(error?.description.contains("call #0, fsync never-made") == true)
    }
}
