import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PrefsCLI

/// `prefs edit` on a terminal: a refused copy is shown and `edit again?
/// [Y/n]` reopens the editor. Run in a detached tmux session on a socket
/// of the test's own, answered with `tmux send-keys`.
@Suite(.enabled(if: tmuxPath != nil, "tmux is not installed"), .scaledTimeLimit(minutes: 5))
struct CLIEditTerminalTests {
    /// An editor that writes invalid JSON the first time and `second` the
    /// next times, counting its runs in `runs` and recording the copy's
    /// path in `copy-path`.
    func alternatingEditor(_ edit: EditWorkspace, second: String) throws -> String {
        try write(second, to: edit.file("second.text"))
        let runs = edit.file("runs").path
        return try edit.script(
            "editor",
            """
            echo run >> '\(runs)'
            printf '%s' "$1" > '\(edit.file("copy-path").path)'
            if [ "$(wc -l < '\(runs)')" -eq 1 ]; then
                printf '{"a": ' > "$1"
            else
                cat '\(edit.file("second.text").path)' > "$1"
            fi
            """)
    }

    @Test func yesReopensTheEditorOnTheTextAndTheValidValueIsWritten() async throws {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([["set", "a", "1"]])
        let editor = try alternatingEditor(edit, second: #"{"a": 2}"#)
        try await TmuxSession.run(edit, editor: editor) { session in
            let screen = try await session.waitFor("edit again? [Y/n]")
            #expect(
                screen.contains(
                    "prefs: error: the edited copy is not valid JSON: line 1, column 7: "),
                "\(screen)")
            try await session.send("y", "Enter")
            let done = try await session.waitFor("EXIT=")
            #expect(done.contains("a: 1 → 2\nEXIT=0"), "\(done)")
        }
        #expect(contents(edit.file("runs")) == "run\nrun\n")
        #expect(try await edit.workspace.storedValues() == ["a": 2])
        #expect(try edit.copyDirectories() == [])
    }

    @Test func aValueTheManifestRefusesCanBeEditedAgainToo() async throws {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([["set", "port", "80"]])
        let manifest = try edit.manifest(
            #"{"format":1,"keys":{"port":{"type":"int","minimum":1,"maximum":65535}}}"#)
        // First 70000, then 8080.
        try write(#"{"port": 8080}"#, to: edit.file("second.text"))
        let runs = edit.file("runs").path
        let editor = try edit.script(
            "editor",
            """
            echo run >> '\(runs)'
            if [ "$(wc -l < '\(runs)')" -eq 1 ]; then
                printf '{"port": 70000}' > "$1"
            else
                cat '\(edit.file("second.text").path)' > "$1"
            fi
            """)
        try await TmuxSession.run(edit, editor: editor, arguments: ["--manifest", manifest]) {
            session in
            let screen = try await session.waitFor("edit again? [Y/n]")
            #expect(
                screen.contains("prefs: error: key 'port' must be at most 65535, not 70000"),
                "\(screen)")
            // Return alone means yes.
            try await session.send("Enter")
            let done = try await session.waitFor("EXIT=")
            #expect(done.contains("port: 80 → 8080\nEXIT=0"), "\(done)")
        }
        #expect(try await edit.workspace.storedValues() == ["port": 8080])
    }

    @Test func noKeepsTheCopyAndExitsThree() async throws {
        let edit = try EditWorkspace()
        try await edit.workspace.prefsSucceeding([["set", "a", "1"]])
        let before = try edit.workspace.fileState()
        let editor = try alternatingEditor(edit, second: #"{"a": 2}"#)
        try await TmuxSession.run(edit, editor: editor) { session in
            _ = try await session.waitFor("edit again? [Y/n]")
            try await session.send("n", "Enter")
            let done = try await session.waitFor("EXIT=")
            #expect(done.contains("EXIT=3"), "\(done)")
            #expect(
                done.contains("prefs: error: nothing was written; your edit is kept in "),
                "\(done)")
        }
        #expect(contents(edit.file("runs")) == "run\n")
        let copy = try #require(edit.recordedCopyPath())
        #expect(contents(URL(fileURLWithPath: copy)) == #"{"a": "#)
        #expect(try edit.workspace.fileState() == before)
    }
}

/// tmux, when installed.
let tmuxPath: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

/// `prefs --file STORE edit` in a detached tmux session of its own (a
/// socket of its own under /tmp, short enough for a socket's path); the
/// pane prints `EXIT=<status>` when the command ends.
struct TmuxSession: Sendable {
    let tmux: String
    let socket: String
    let environment: [String: String]

    /// Starts the session, runs `body` with it, and ends it either way.
    static func run(
        _ edit: EditWorkspace, editor: String, arguments: [String] = [],
        _ body: (TmuxSession) async throws -> Void
    ) async throws {
        let session = try await TmuxSession(edit, editor: editor, arguments: arguments)
        do {
            try await body(session)
        } catch {
            await session.end()
            throw error
        }
        await session.end()
    }

    private init(_ edit: EditWorkspace, editor: String, arguments: [String]) async throws {
        tmux = try #require(tmuxPath)
        socket = "/tmp/prefs-tmux-\(UUID().uuidString.prefix(8)).socket"
        var environment = cleanEnvironment()
        environment["TMUX"] = nil
        self.environment = environment
        let prefs = productURL("prefs").path
        let command =
            "cd '\(edit.directory.path)' && "
            + "TMPDIR='\(edit.directory.path)' EDITOR='\(editor)' '\(prefs)' "
            + "--file '\(edit.store.path)' "
            + arguments.map { "'\($0)' " }.joined()
            + "edit; echo \"EXIT=$?\"; sleep 600"
        // Not through Process: the server tmux starts would keep the socket
        // by which Foundation sees the child end, and the signals the test
        // process blocks. prefs's own spawn passes neither.
        let started = try await ForegroundProcess.run(
            [
                tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y",
                "50", command,
            ], environment: environment)
        try #require(started == .exited(0), "tmux new-session \(started)")
    }

    /// The pane's text, wrapped lines joined.
    func screen() async throws -> String {
        try await runProgram(
            tmux, ["-S", socket, "capture-pane", "-p", "-J"], environment: environment
        ).standardOutput
    }

    /// The screen once it shows `text`; throws with the screen after `timeout`.
    func waitFor(_ text: String, timeout: Duration = .seconds(60)) async throws -> String {
        let deadline = TestTime.deadline(in: timeout)
        while true {
            let shown = try await screen()
            if shown.contains(text) { return shown }
            guard ContinuousClock.now < deadline else {
                throw DeadlineExceeded(
                    description: "tmux: no \"\(text)\" within \(timeout); the screen: \"\(shown)\"")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Types `keys` (tmux key names: `y`, `Enter`).
    func send(_ keys: String...) async throws {
        let sent = try await runProgram(
            tmux, ["-S", socket, "send-keys"] + keys, environment: environment)
        try #require(sent.status == 0, "tmux send-keys: \(sent.standardError)")
    }

    /// Ends the tmux server and what runs in it, and removes its socket.
    func end() async {
        _ = try? await runProgram(tmux, ["-S", socket, "kill-server"], environment: environment)
        try? FileManager.default.removeItem(atPath: socket)
    }
}
