import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// The shim's record mode, which the crash-state explorer replays: every
/// call that changes the disk, in order, with paths from the descriptors
/// (S2, M3, <doc:Reliability>).
@Suite(.serialized, .takesTurns(.diskRecorder)) struct DiskRecordingTests {
    /// The calls recorded while `body` runs, those under `directory` only
    /// (tests of other suites may write meanwhile), with paths relative to it.
    static func recording(in directory: TemporaryDirectory, _ body: () async throws -> Void)
        async throws -> [String]
    {
        let root = directory.url.resolvingSymlinksInPath().path
        DiskRecorder.start()
        do {
            try await body()
        } catch {
            _ = DiskRecorder.stop()
            throw error
        }
        func short(_ path: String) -> String? {
            guard path == root || path.hasPrefix(root + "/") else { return nil }
            let name = String(path.dropFirst(root.count)).drop { $0 == "/" }
            // Temporary names are random: keep their shape only.
            return name.hasPrefix(".") && name.hasSuffix(".tmp")
                ? ".tmp" : name.isEmpty ? "." : String(name)
        }
        return DiskRecorder.stop().compactMap { operation in
            switch operation {
            case .create(let path, _): short(path).map { "create \($0)" }
            case .write(let path, _, _): short(path).map { "write \($0)" }
            case .truncate(let path, _): short(path).map { "truncate \($0)" }
            case .sync(let path): short(path).map { "fsync \($0)" }
            case .syncDirectory(let path): short(path).map { "fsync directory \($0)" }
            case .rename(let from, let to):
                short(from).flatMap { from in short(to).map { "rename \(from) \($0)" } }
            case .unlink(let path): short(path).map { "unlink \($0)" }
            case .makeDirectory(let path): short(path).map { "mkdir \($0)" }
            case .link, .changeMode, .changeOwner, .mark: nil
            }
        }
    }

    @Test func aSetIsRecordedAsTemporaryFileFsyncRenameAndDirectoryFsync() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        try await PreferencesStore(fileURL: file, liveReads: false).set(PreferenceKeys.counter, 1)
        let calls = try await Self.recording(in: directory) {
            try await PreferencesStore(fileURL: file, liveReads: false).set(
                PreferenceKeys.counter, 2)
        }
        #expect(
            calls == [
                "write prefs.json.lock", "create .tmp", "write .tmp", "fsync .tmp",
                "rename .tmp prefs.json", "fsync directory .", "write prefs.json.lock",
            ])
    }

    @Test func aLegacyFileIsRenamedOnlyAfterTheDocumentIsDurable() async throws {
        let directory = try TemporaryDirectory()
        let legacy = directory.file("old.properties")
        try write("dark_mode=true\n", to: legacy)
        let calls = try await Self.recording(in: directory) {
            _ = try await PreferencesStore(
                fileURL: directory.file("prefs.json"),
                migrations: [LegacyImport(.properties, at: legacy)], liveReads: false)
        }
        let committed = try #require(calls.firstIndex(of: "rename .tmp prefs.json"))
        let cleanedUp = try #require(
            calls.firstIndex(of: "rename old.properties old.properties.migrated"))
        #expect(calls[committed + 1] == "fsync directory .")
        #expect(committed + 1 < cleanedUp)
        #expect(calls.last == "fsync directory .")
    }

    @Test func nothingIsRecordedWhileRecordingIsOff() async throws {
        let directory = try TemporaryDirectory()
        try await PreferencesStore(fileURL: directory.file("prefs.json"), liveReads: false).set(
            PreferenceKeys.counter, 1)
        #expect(DiskRecorder.stop().isEmpty)
    }
}
