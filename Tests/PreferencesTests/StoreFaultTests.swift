import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Real faults on real file systems: a read-only mount and a full one.
@Suite(
    .enabled(if: canMountTmpfs, "\(TmpfsMount.unavailableReason)"), .scaledTimeLimit(minutes: 10))
struct StoreFaultTests {
    @Test func readOnlyDirectoryIsAnIOErrorAndReadsStillWork() async throws {
        let mount = try #require(TmpfsMount(size: "1m"))
        let url = mount.url.appendingPathComponent("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        try mount.remount(readOnly: true)
        await #expect {
            try await store.set(.language, "de")
        } throws: { error in
            guard case PreferencesError.io(_, _, let code, let message) = error else {
                return false
            }
            return code == EROFS && !message.isEmpty
        }
        #expect(store[.language] == "fr")
        // A fresh process can still open and read the file.
        let reader = try await runChild("prefs", ["--file", url.path, "get", "language"])
        #expect(reader.status == 0, "prefs get on a read-only mount: \(reader.standardError)")
        #expect(reader.standardOutput == "fr\n")
        // Once the fault is gone the same store writes again.
        try mount.remount(readOnly: false)
        try await store.set(.language, "de")
        #expect(store[.language] == "de")
        #expect(contents(url)?.contains("\"de\"") == true)
    }

    @Test func diskFullFailsTheWriteAndKeepsTheOldFile() async throws {
        let mount = try #require(TmpfsMount(size: "64k"))
        let url = mount.url.appendingPathComponent("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        // Registered now, not up to a second after the open: its folder is
        // among the files below.
        await store.registeredAsReplica()
        try await store.set(.language, "fr")
        let before = contents(url)
        await #expect {
            try await store.edit {
                $0[raw: "big"] = .string(String(repeating: "x", count: 200_000))
            }
        } throws: { error in
            guard case PreferencesError.io(_, _, let code, _) = error else { return false }
            return code == ENOSPC
        }
        #expect(contents(url) == before)
        #expect(store.snapshot.values["big"] == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: mount.url.path).sorted()
        #expect(names == ["prefs.json", "prefs.json.lock", "prefs.replicas.d"])
        try await store.set(.language, "de")
        #expect(store[.language] == "de")
    }
}

/// Root bypasses permission bits: the child runs as another user.
@Suite(
    .enabled(if: canSwitchUser, "needs root and /usr/bin/setpriv to run a child as another user"),
    .scaledTimeLimit(minutes: 10))
struct StorePermissionFaultTests {
    @Test func anotherUserWithoutPermissionGetsAnIOError() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        // The temp directory's parent must be reachable by the other user.
        _ = try await runTool("/bin/chmod", ["0755", directory.path])
        let output = try await ChildCommand(
            "prefs-harness", ["increment", url.path, "counter", "1"], output: .merged,
            user: nobodyUser
        ).run()
        let message = output.standardOutput
        #expect(output.status == 1, "\(message)")
        #expect(message.contains("Permission denied"), "\(message)")
        #expect(store[.counter] == 1)
        #expect(contents(url)?.contains("\"counter\" : 1") == true)
    }
}
