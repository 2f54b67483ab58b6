import Foundation
import Preferences
import PreferencesTestSupport
import PreferencesTesting
import Testing

/// A store and editor scripts in a fresh directory, for `prefs edit`.
///
/// Editors are small `/bin/sh` scripts written into the directory. Each
/// run sets `TMPDIR` to the directory, so the copies `prefs edit` makes
/// (and keeps, when nothing was written) go with it.
final class EditWorkspace: Sendable {
    let workspace: CLIWorkspace
    var directory: URL { workspace.directory.url }
    var store: URL { workspace.store }

    init() throws {
        workspace = try CLIWorkspace()
    }

    func file(_ name: String) -> URL { workspace.file(name) }

    /// An executable script `name`: `/bin/sh` running `body`. Returns its path.
    @discardableResult
    func script(_ name: String, _ body: String) throws -> String {
        let url = file(name)
        try write("#!/bin/sh\n" + body + "\n", to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url.path
    }

    /// An editor that records the copy's path in `copy-path` and replaces
    /// the copy with `text`.
    func writingEditor(_ text: String, name: String = "editor") throws -> String {
        try write(text, to: file("\(name).text"))
        return try script(
            name,
            """
            printf '%s' "$1" > '\(file("copy-path").path)'
            cat '\(file("\(name).text").path)' > "$1"
            """)
    }

    /// An editor that records the copy's path in `copy-path`, copies what
    /// it was shown to `shown.json`, creates `started`, waits for `go` (at
    /// most 60 s, then exits with status 9), and replaces the copy with `text`.
    func waitingEditor(_ text: String, records: URL? = nil) throws -> String {
        let records = records ?? directory
        try write(text, to: file("editor.text"))
        return try script(
            "waiting-editor",
            """
            records='\(records.path)'
            printf '%s' "$1" > "$records/copy-path"
            id -u > "$records/editor-uid"
            cp "$1" "$records/shown.json"
            : > "$records/started"
            i=0
            while [ ! -e "$records/go" ]; do
                i=$((i + 1))
                [ $i -gt 1200 ] && exit 9
                sleep 0.05
            done
            cat '\(file("editor.text").path)' > "$1"
            """)
    }

    /// Runs `prefs --file STORE [arguments] edit` with `EDITOR` set to
    /// `editor` (unless nil) and `TMPDIR` to the directory, plus `environment`.
    func edit(
        editor: String?, environment: [String: String] = [:], arguments: [String] = [],
        timeout: Duration = .seconds(120)
    ) async throws -> ProcessOutput {
        try await runChild(
            "prefs", ["--file", store.path] + arguments + ["edit"],
            environment: editEnvironment(editor: editor, environment), timeout: timeout)
    }

    /// Starts the same without waiting for it.
    func startEdit(editor: String, environment: [String: String] = [:]) throws -> RunningProcess {
        try ChildCommand(
            "prefs", ["--file", store.path, "edit"],
            environment: editEnvironment(editor: editor, environment)
        ).start()
    }

    func editEnvironment(editor: String?, _ extra: [String: String]) -> [String: String] {
        var environment = cleanEnvironment()
        environment["TMPDIR"] = directory.path
        environment["EDITOR"] = editor
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Waits (at most `timeout`) until the file `name` exists in `records`.
    func waitForFile(_ name: String, in records: URL? = nil, timeout: Duration = .seconds(60))
        async throws
    {
        let url = (records ?? directory).appendingPathComponent(name)
        let deadline = TestTime.deadline(in: timeout)
        while !FileManager.default.fileExists(atPath: url.path) {
            guard ContinuousClock.now < deadline else {
                throw DeadlineExceeded(description: "no \(url.path) within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The copy's path the editor recorded.
    func recordedCopyPath(in records: URL? = nil) -> String? {
        contents((records ?? directory).appendingPathComponent("copy-path"))
    }

    /// The `prefs-edit.*` directories left in the workspace.
    func copyDirectories() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("prefs-edit.") }
    }

    /// Writes a key manifest and returns its path.
    func manifest(_ json: String) throws -> String {
        let url = file("keys.json")
        try write(json, to: url)
        return url.path
    }
}

extension ProcessOutput {
    /// The path at the end of `…; your edit is kept in PATH`, if the error says so.
    var keptCopy: String? {
        let marker = "; your edit is kept in "
        guard standardError.hasSuffix("\n"), let range = standardError.range(of: marker) else {
            return nil
        }
        return String(standardError[range.upperBound...].dropLast())
    }
}
