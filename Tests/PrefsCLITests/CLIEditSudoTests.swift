import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sudo prefs edit`: root with `$SUDO_USER` naming a real user (here
/// `nobody`, whose home does not exist). The editor runs as that user, on
/// a copy in a directory under /tmp that user owns, as `sudoedit` does;
/// only the store's read and write run as root.
@Suite(
    .enabled(if: canSwitchUser, "needs root and setpriv to run the editor as another user"),
    .scaledTimeLimit(minutes: 5))
struct CLIEditSudoTests {
    @Test func theEditorRunsAsTheInvokingUserOnACopyThatUserOwns() async throws {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([["set", "a", "1"], ["set", "b", "x"]])
        // The store belongs to a service account, neither root nor the editing user.
        let service: UInt32 = 4242
        giveAway(edit.store.path, to: service)
        // nobody reaches the scripts, and records what it saw in a folder of its own.
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: edit.directory.path)
        let records = edit.file("records")
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o777], ofItemAtPath: records.path)
        let editor = try edit.waitingEditor(#"{"a": 2, "b": "x"}"#, records: records)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o644], ofItemAtPath: edit.file("editor.text").path)

        let child = try edit.startEdit(
            editor: editor, environment: ["SUDO_USER": "nobody", "SUDO_UID": "65534"])
        var copy: String?
        do {
            try await edit.waitForFile("started", in: records)
            copy = edit.recordedCopyPath(in: records)
            let path = try #require(copy)
            #expect(contents(records.appendingPathComponent("editor-uid")) == "\(nobodyUser)\n")
            // A directory of its own under /tmp, not TMPDIR, which nobody might not reach.
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            #expect(folder.hasPrefix("/tmp/prefs-edit."))
            let copyStatus = try #require(fileStatus(path, followingLinks: false))
            #expect(copyStatus.st_uid == nobodyUser)
            #expect(UInt32(copyStatus.st_mode) & 0o7777 == 0o600)
            let folderStatus = try #require(fileStatus(folder, followingLinks: false))
            #expect(folderStatus.st_uid == nobodyUser)
            #expect(UInt32(folderStatus.st_mode) & 0o7777 == 0o700)
        } catch {
            child.kill()
            if let copy { try? FileManager.default.removeItem(atPath: parent(of: copy)) }
            throw error
        }
        try write("", to: records.appendingPathComponent("go"))
        let output = try await child.result()
        // Outside the test's directory: a copy kept by a failure goes here.
        if let kept = output.keptCopy {
            try? FileManager.default.removeItem(atPath: parent(of: kept))
        }
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "a: 1 → 2\n")
        #expect(try await edit.workspace.storedValues() == ["a": 2, "b": "x"])
        // The store still belongs to its owner; the copy and its folder are gone.
        #expect(fileStatus(edit.store.path)?.st_uid == service)
        if let copy {
            #expect(!FileManager.default.fileExists(atPath: parent(of: copy)))
        }
        let entry = try #require(try await edit.workspace.libraryHistory().entries.last)
        #expect(entry.sudoUser == "nobody")
        #expect(entry.cause == "edit")
    }

    @Test func aCopyTheUserSwappedForALinkIsNotReadAsRoot() async throws {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([["set", "a", "1"]])
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: edit.directory.path)
        // Root's secret, which nobody cannot read.
        let secret = edit.file("secret.json")
        try write(#"{"a": 99}"#, to: secret)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret.path)
        let before = try edit.workspace.fileState()
        let editor = try edit.script("editor", "rm -f \"$1\" && ln -s '\(secret.path)' \"$1\"")
        let output = try await edit.edit(editor: editor, environment: ["SUDO_USER": "nobody"])
        #expect(output.status == 5, "\(output.standardError)")
        let kept = try #require(output.keptCopy, "\(output.standardError)")
        defer { try? FileManager.default.removeItem(atPath: parent(of: kept)) }
        #expect(output.standardError.hasPrefix("prefs: error: cannot open \(kept): "))
        #expect(try edit.workspace.fileState() == before)
    }

    @Test func sudoUserRootOrUnknownEditsAsThisUser() async throws {
        let edit = try EditWorkspace()
        let editor = try edit.script(
            "editor", "id -u > '\(edit.file("uid").path)'; printf '{\"a\": 1}' > \"$1\"")
        for user in ["root", "no-such-user-\(UUID().uuidString.prefix(8))"] {
            let output = try await edit.edit(editor: editor, environment: ["SUDO_USER": user])
            #expect(output.status == 0, "\(output.standardError)")
            #expect(contents(edit.file("uid")) == "\(getuid())\n")
        }
    }

    func parent(of path: String) -> String {
        URL(fileURLWithPath: path).deletingLastPathComponent().path
    }
}
