import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Who uses a store, on files, with real processes: every program's
/// manifest, replica registration, `prefs replicas`, `set --wait` and the
/// mixed-version guard (F1–F5 in
/// Sources/Preferences/Preferences.docc/RollingOutAChange.md).
@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 10)) struct CLIReplicasTests
{
    let workspace: CLIWorkspace

    init() throws {
        workspace = try CLIWorkspace()
    }

    /// Starts `prefs-harness replica` declaring `interval_ms` of at most
    /// `maximum`, named `program`, and waits for its "ready".
    func startReplica(program: String, maximum: Int) async throws -> RunningProcess {
        var environment = cleanEnvironment()
        environment["PREFS_PROGRAM"] = program
        let child = try RunningProcess(
            "prefs-harness", ["replica", workspace.store.path, String(maximum)],
            environment: environment)
        #expect(try await child.nextLine(timeout: .seconds(30)) == "ready")
        return child
    }

    func replicas() async throws -> [PreferencesReplica] {
        let output = try await workspace.prefs("replicas", "--json")
        #expect(output.status == 0, "\(output.standardError)")
        guard case .array(let items) = try TestJSON.parse(output.line) else {
            Issue.record("not a JSON array: \(output.line)")
            return []
        }
        return items.compactMap { PreferencesReplica(jsonBytes: Array($0.jsonText.utf8)) }
    }

    @Test func threeReplicasAreListedAndWaitedFor() async throws {
        let children = [
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
        ]
        defer { Task { [children] in try? await stopChildren(children) } }
        let listed = try await replicas()
        #expect(listed.map(\.pid).sorted() == children.map(\.process.processIdentifier).sorted())
        #expect(listed.allSatisfy { $0.program == "svc" && $0.applied == 0 })
        let digest = try PreferencesManifest(
            jsonText:
                #"{"format": 1, "keys": {"interval_ms": {"type": "int", "default": 10, "maximum": 100}}}"#
        ).digest
        #expect(listed.allSatisfy { $0.manifest == digest })

        let table = try await workspace.prefs("replicas")
        let lines = table.standardOutput.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("HOST") == true)

        let set = try await workspace.prefs("set", "interval_ms", "50", "--wait", "20s")
        #expect(set.status == 0, "\(set.standardError)")
        #expect(set.line.hasPrefix("applied on 3/3 replicas in "))
        #expect(try await replicas().map(\.applied) == [1, 1, 1])
        try await stopChildren(children)
    }

    @Test func aKilledReplicaIsGoneAtOnce() async throws {
        let children = [
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
        ]
        defer { Task { [children] in try? await stopChildren(children) } }
        #expect(try await replicas().count == 3)
        let victim = children[0]
        victim.kill(SIGKILL)
        _ = try await victim.exit(timeout: .seconds(30))
        let left = try await replicas()
        #expect(left.count == 2)
        #expect(!left.contains { $0.pid == victim.process.processIdentifier })
        let file = FileStorage(fileURL: workspace.store).replicasDirectory
        #expect(try FileManager.default.contentsOfDirectory(atPath: file).count == 2)
        let set = try await workspace.prefs("set", "interval_ms", "60", "--wait", "20s")
        #expect(set.line.hasPrefix("applied on 2/2 replicas in "))
        try await stopChildren(children)
    }

    @Test func aStoppedReplicaMakesTheWaitTimeOut() async throws {
        let children = [
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
        ]
        defer { Task { [children] in try? await stopChildren(children) } }
        let stopped = children[1]
        stopped.kill(SIGSTOP)
        let clock = ContinuousClock()
        let start = clock.now
        let set = try await workspace.prefs("set", "interval_ms", "70", "--wait", "2s")
        let elapsed = clock.now - start
        #expect(set.status == 6)
        #expect(
            set.standardError
                == "prefs: error: change 1 not applied within 2 s by "
                + "\(Platform.hostName)/\(stopped.process.processIdentifier) (svc, at 0)\n")
        #expect(elapsed >= .seconds(2))
        // The write itself is done.
        #expect(try await workspace.storedValues()["interval_ms"] == 70)
        stopped.kill(SIGCONT)
        try await stopChildren(children)
    }

    /// A wait is for the change just made, not for any change: a replica
    /// that applied change 1 and then stopped holds the wait for change 2
    /// until its timeout, and a wait for change 4 until it resumes.
    @Test func aStoppedReplicaThatAppliedAnEarlierChangeIsWaitedFor() async throws {
        let children = [
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
        ]
        defer { Task { [children] in try? await stopChildren(children) } }
        let first = try await workspace.prefs("set", "interval_ms", "50", "--wait", "20s")
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.line.hasPrefix("applied on 2/2 replicas in "), "\(first.standardOutput)")
        #expect(try await replicas().map(\.applied) == [1, 1])

        let stopped = children[1]
        stopped.kill(SIGSTOP)
        let clock = ContinuousClock()
        let start = clock.now
        let second = try await workspace.prefs("set", "interval_ms", "60", "--wait", "2s")
        let elapsed = clock.now - start
        #expect(second.status == 6)
        #expect(second.standardOutput == "")
        #expect(
            second.standardError
                == "prefs: error: change 2 not applied within 2 s by "
                + "\(Platform.hostName)/\(stopped.process.processIdentifier) (svc, at 1)\n")
        #expect(elapsed >= .seconds(2))
        stopped.kill(SIGCONT)
        let third = try await workspace.prefs("set", "interval_ms", "70", "--wait", "20s")
        #expect(third.line.hasPrefix("applied on 2/2 replicas in "), "\(third.standardOutput)")

        // Stopped at change 3, it holds a wait for change 4 until it resumes.
        stopped.kill(SIGSTOP)
        let waiter = try RunningProcess(
            "prefs",
            ["--file", workspace.store.path, "set", "interval_ms", "80", "--wait", "60s"])
        defer { Task { [waiter] in try? await stopChildren([waiter]) } }
        #expect(
            await eventually(seconds: 30) { hasDirectoryWatch(waiter.process.processIdentifier) },
            "the waiter's watch of the registrations")
        // The running replica applies change 4 and says so in its
        // registration, which the waiter's watch reports: a wait that wrongly
        // counted the stopped replica would print its line and end then.
        let running = children[0].process.processIdentifier
        let deadline = TestTime.deadline(in: .seconds(30))
        var reported = try await replicas().first { $0.pid == running }?.applied
        while reported != 4 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            reported = try await replicas().first { $0.pid == running }?.applied
        }
        try #require(
            reported == 4,
            "the running replica reports change \(reported.map { "\($0)" } ?? "none"), not 4")
        await #expect(
            throws: DeadlineExceeded.self, "the wait ended while a replica was at change 3"
        ) {
            let line = try await waiter.nextLine(timeout: .seconds(2))
            Issue.record(
                "the waiter printed \(line ?? "nothing and ended") with a replica at change 3")
        }
        stopped.kill(SIGCONT)
        let applied = try await waiter.nextLine(timeout: .seconds(30))
        #expect(applied?.hasPrefix("applied on 2/2 replicas in ") == true, "\(applied ?? "")")
        #expect(try await waiter.exit(timeout: .seconds(30)) == 0)
        #expect(try await replicas().map(\.applied) == [4, 4])
        try await stopChildren(children)
    }

    /// A service stopped with SIGTERM closes its store: its registration
    /// goes at once, so a wait running then ends (the replica gone, or its
    /// last report of the change), never at its deadline.
    @Test func aReplicaClosedOnSIGTERMEndsTheWaitAtOnce() async throws {
        let replica = try await startReplica(program: "svc", maximum: 100)
        defer { Task { [replica] in try? await stopChildren([replica]) } }
        replica.kill(SIGSTOP)
        let waiter = try RunningProcess(
            "prefs",
            ["--file", workspace.store.path, "set", "interval_ms", "80", "--wait", "600s"])
        defer { Task { [waiter] in try? await stopChildren([waiter]) } }
        #expect(
            await eventually(seconds: 30) { hasDirectoryWatch(waiter.process.processIdentifier) },
            "the waiter's watch of the registrations")
        replica.kill(SIGTERM)
        replica.kill(SIGCONT)
        #expect(try await replica.nextLine(timeout: .seconds(30)) == "closed")
        #expect(try await replica.exit(timeout: .seconds(30)) == 0)
        #expect(try await replicas().isEmpty, "listed after it closed")
        var lines: [String] = []
        while let line = try await waiter.nextLine(timeout: .seconds(30)) { lines.append(line) }
        #expect(try await waiter.exit(timeout: .seconds(30)) == 0)
        let name = "\(Platform.hostName)/\(replica.process.processIdentifier)"
        #expect(
            lines == [
                "replica \(name) (svc) has gone",
                "applied on 0/0 replicas in \(lines.last?.split(separator: " ").dropLast().last ?? "") ms",
            ]
                || lines.first?.hasPrefix("applied on 1/1 replicas in ") == true,
            "the wait said \(lines)")
        print("a wait on a replica closed by SIGTERM said: \(lines)")
    }

    @Test func aReplicaKilledDuringTheWaitIsReportedGone() async throws {
        let children = [
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
        ]
        defer { Task { [children] in try? await stopChildren(children) } }
        let stopped = children[0]
        stopped.kill(SIGSTOP)
        let waiter = try RunningProcess(
            "prefs",
            ["--file", workspace.store.path, "set", "interval_ms", "80", "--wait", "60s"])
        // The waiter has listed the replicas once its watch of them exists.
        #expect(
            await eventually(seconds: 30) { hasDirectoryWatch(waiter.process.processIdentifier) },
            "the waiter's watch of the registrations")
        stopped.kill(SIGKILL)
        let gone = try await waiter.nextLine(timeout: .seconds(30))
        #expect(
            gone
                == "replica \(Platform.hostName)/\(stopped.process.processIdentifier) (svc) has gone"
        )
        let applied = try await waiter.nextLine(timeout: .seconds(30))
        #expect(applied?.hasPrefix("applied on 1/1 replicas in ") == true)
        #expect(try await waiter.exit(timeout: .seconds(30)) == 0)
        try await stopChildren(children)
    }

    @Test func everyCommandThatWritesCanWait() async throws {
        // An old version (at most 100) and a new one (at most 1000, published last).
        let old = try await startReplica(program: "svc", maximum: 100)
        let new = try await startReplica(program: "svc", maximum: 1000)
        defer { Task { [old, new] in try? await stopChildren([old, new]) } }
        func lines(_ arguments: String...) async throws -> [String] {
            let output = try await workspace.prefs(arguments)
            #expect(output.status == 0, "\(arguments): \(output.standardError)")
            return output.standardOutput.split(separator: "\n").map {
                $0.hasPrefix("applied on") ? String($0.prefix(23)) : String($0)
            }
        }
        #expect(try await lines("set", "interval_ms", "5", "--wait") == ["applied on 2/2 replicas"])
        #expect(
            try await lines("delete", "interval_ms", "--wait=10s") == ["applied on 2/2 replicas"])
        let file = workspace.file("desired.json")
        try write(#"{"interval_ms": 7}"#, to: file)
        #expect(
            try await lines("apply", file.path, "--wait", "10s")
                == ["applied 1 change as #3", "applied on 2/2 replicas"])
        #expect(
            try await lines("revert", "3", "--wait")
                == ["reverted #3 as #4", "applied on 2/2 replicas"])
        #expect(
            try await lines("restore", "--to", "3", "--wait")
                == ["restored to #3 as #5", "applied on 2/2 replicas"])
        #expect(try await replicas().map(\.applied) == [5, 5])
        // edit, with an editor that sets interval_ms to 9.
        let editor = workspace.file("editor")
        try write("#!/bin/sh\nprintf '{\"interval_ms\": 9}' > \"$1\"\n", to: editor)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: editor.path)
        var environment = cleanEnvironment()
        environment["EDITOR"] = editor.path
        environment["TMPDIR"] = workspace.directory.url.path
        let edited = try await runChild(
            "prefs", ["--file", workspace.store.path, "edit", "--wait"], environment: environment)
        #expect(edited.status == 0, "\(edited.standardError)")
        #expect(edited.standardOutput.hasPrefix("interval_ms: 7 → 9\napplied on 2/2 replicas in "))
        #expect(try await replicas().map(\.applied) == [6, 6])
        // edit checks the old version's manifest too, unless --force.
        try write("#!/bin/sh\nprintf '{\"interval_ms\": 700}' > \"$1\"\n", to: editor)
        let refusedEdit = try await runChild(
            "prefs", ["--file", workspace.store.path, "edit"], environment: environment)
        #expect(refusedEdit.status == 3)
        #expect(
            refusedEdit.standardError.hasPrefix(
                "prefs: error: key 'interval_ms' must be at most 100, not 700 for replica "
                    + "\(Platform.hostName)/\(old.process.processIdentifier) (program svc)"),
            "\(refusedEdit.standardError)")
        let forcedEdit = try await runChild(
            "prefs", ["--file", workspace.store.path, "edit", "--force"], environment: environment)
        #expect(forcedEdit.status == 0, "\(forcedEdit.standardError)")
        #expect(forcedEdit.standardOutput == "interval_ms: 9 → 700\n")
        // apply checks the old version's manifest too.
        try write(#"{"interval_ms": 700}"#, to: file)
        let refused = try await workspace.prefs("apply", file.path)
        #expect(refused.status == 3)
        #expect(
            refused.standardError
                == "prefs: error: key 'interval_ms' must be at most 100, not 700 for replica "
                + "\(Platform.hostName)/\(old.process.processIdentifier) (program svc); "
                + "pass --force to write it anyway\n")
        #expect(try await workspace.prefs("apply", file.path, "--force").status == 0)
        try await stopChildren([old, new])
    }

    @Test func onATerminalTheWaitShowsProgress() async throws {
        // script(1) gives prefs a terminal; it is part of util-linux.
        let script = "/usr/bin/script"
        try #require(FileManager.default.isExecutableFile(atPath: script), "script(1) is needed")
        let children = [
            try await startReplica(program: "svc", maximum: 100),
            try await startReplica(program: "svc", maximum: 100),
        ]
        defer { Task { [children] in try? await stopChildren(children) } }
        children[1].kill(SIGSTOP)
        let command =
            "'\(productURL("prefs").path)' --file '\(workspace.store.path)' "
            + "set interval_ms 5 --wait 1s"
        let output = try await runProgram(script, ["-qec", command, "/dev/null"])
        // The count as it changes (the live replica may still be applying
        // it at the first look), then the error on a line of its own.
        let shown = output.standardOutput
        #expect(
            shown.hasPrefix("\r1/2 replicas have applied change 1\r\n")
                || shown.hasPrefix(
                    "\r0/2 replicas have applied change 1\r1/2 replicas have applied change 1\r\n"),
            "\(shown.debugDescription)")
        #expect(
            output.standardOutput.hasSuffix(
                "1/2 replicas have applied change 1\r\nprefs: error: change 1 not applied within 1 s by "
                    + "\(Platform.hostName)/\(children[1].process.processIdentifier) (svc, at 0)\r\n"
            ), "\(output.standardOutput.debugDescription)")
        try await stopChildren(children)
    }

    @Test func anOldVersionStillRunningRefusesWhatItCannotRead() async throws {
        // The old version allows at most 100, the new one (published last) 1000.
        let old = try await startReplica(program: "svc", maximum: 100)
        let new = try await startReplica(program: "svc", maximum: 1000)
        defer { Task { [old, new] in try? await stopChildren([old, new]) } }
        let refused = try await workspace.prefs("set", "interval_ms", "500")
        #expect(refused.status == 3)
        #expect(
            refused.standardError
                == "prefs: error: key 'interval_ms' must be at most 100, not 500 for replica "
                + "\(Platform.hostName)/\(old.process.processIdentifier) (program svc); "
                + "pass --force to write it anyway\n")
        #expect(try await workspace.storedValues()["interval_ms"] == nil)
        let forced = try await workspace.prefs("set", "interval_ms", "500", "--force")
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(try await workspace.storedValues()["interval_ms"] == 500)
        // Once the old version is gone, the value goes through.
        old.kill(SIGKILL)
        _ = try await old.exit(timeout: .seconds(30))
        #expect(try await workspace.prefs("set", "interval_ms", "600").status == 0)
        try await stopChildren([new])
    }

    @Test func anOldVersionAmongThreeReplicasIsNamedAndAForcedWaitReachesAllThree() async throws {
        // Two replicas of the new version (at most 1000) and, started between
        // them, one of the old (at most 100); the new one published last.
        // Each replica is checked against the version it runs (by its
        // manifest's digest), not against one manifest per program.
        let first = try await startReplica(program: "svc", maximum: 1000)
        let old = try await startReplica(program: "svc", maximum: 100)
        let last = try await startReplica(program: "svc", maximum: 1000)
        let children = [first, old, last]
        defer { Task { [children] in try? await stopChildren(children) } }
        #expect(try await replicas().count == 3)
        let refused = try await workspace.prefs("set", "interval_ms", "500")
        #expect(refused.status == 3)
        #expect(
            refused.standardError
                == "prefs: error: key 'interval_ms' must be at most 100, not 500 for replica "
                + "\(Platform.hostName)/\(old.process.processIdentifier) (program svc); "
                + "pass --force to write it anyway\n")
        #expect(try await workspace.storedValues()["interval_ms"] == nil)
        // A value every version reads needs no --force.
        let accepted = try await workspace.prefs("set", "interval_ms", "50", "--wait", "20s")
        #expect(accepted.status == 0, "\(accepted.standardError)")
        #expect(
            accepted.line.hasPrefix("applied on 3/3 replicas in "), "\(accepted.standardOutput)")
        let forced = try await workspace.prefs(
            "set", "interval_ms", "500", "--force", "--wait", "20s")
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(forced.line.hasPrefix("applied on 3/3 replicas in "), "\(forced.standardOutput)")
        #expect(try await workspace.storedValues()["interval_ms"] == 500)
        #expect(try await replicas().map(\.applied) == [2, 2, 2])
        try await stopChildren(children)
    }

    @Test func everyProgramsManifestIsKeptAndChecked() async throws {
        let first = try await startReplica(program: "alpha", maximum: 100)
        let second = try await startReplica(program: "beta", maximum: 1000)
        try await stopChildren([first, second])
        let directory = FileStorage(fileURL: workspace.store).manifestsDirectory
        #expect(FileManager.default.fileExists(atPath: directory + "/alpha.json"))
        #expect(FileManager.default.fileExists(atPath: directory + "/beta.json"))
        // The store's one manifest keeps working for readers that know only it.
        #expect(FileManager.default.fileExists(atPath: workspace.file("prefs.keys.json").path))
        // Nobody runs: alpha's declaration still refuses, naming it.
        let refused = try await workspace.prefs("set", "interval_ms", "500")
        #expect(refused.status == 3)
        #expect(
            refused.standardError
                == "prefs: error: key 'interval_ms' must be at most 100, not 500 (declared by program alpha)\n"
        )
        #expect(try await workspace.prefs("set", "interval_ms", "50").status == 0)
    }

    @Test func conflictingDeclarationsAreReportedByCheckAndInProblems() async throws {
        let conflicting =
            #"{"format": 1, "keys": {"interval_ms": {"type": "string", "default": "fast"}}}"#
        let directory = FileStorage(fileURL: workspace.store).manifestsDirectory
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        try write(conflicting, to: URL(fileURLWithPath: directory + "/gamma.json"))
        let child = try await startReplica(program: "alpha", maximum: 100)
        defer { Task { [child] in try? await stopChildren([child]) } }
        let check = try await workspace.prefs("check")
        #expect(check.status == 3)
        #expect(
            check.standardError
                == "prefs: error: key 'interval_ms' is declared differently by program alpha "
                + "(int, default 10) and program gamma (string, default \"fast\")\n")
        // The store's problems say the same, in the process that declares.
        let store = try await PreferencesStore(fileURL: workspace.store, liveReads: false)
        await store.declare(
            try PreferencesManifest(
                jsonText: #"{"format": 1, "keys": {"interval_ms": {"type": "int", "default": 10}}}"#
            ))
        #expect(
            store.problems.map(\.message).contains(
                "key 'interval_ms' is declared differently by program gamma (string, default \"fast\") "
                    + "and program \(PreferencesReplica.currentProgram) (int, default 10)"
            )
                || store.problems.map(\.message).contains(
                    "key 'interval_ms' is declared differently by program \(PreferencesReplica.currentProgram) "
                        + "(int, default 10) and program gamma (string, default \"fast\")")
        )
        try await stopChildren([child])
    }

    /// A program's manifest that does not parse stops `prefs` (it would
    /// type keys differently from that program) but not a service, whose
    /// declaration is checked against the manifests that do parse.
    @Test func aBrokenProgramManifestStopsPrefsButNotTheService() async throws {
        let directory = FileStorage(fileURL: workspace.store).manifestsDirectory
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        try write(#"{"format": 1, "keys": "#, to: URL(fileURLWithPath: directory + "/delta.json"))
        let conflicting =
            #"{"format": 1, "keys": {"interval_ms": {"type": "string", "default": "fast"}}}"#
        try write(conflicting, to: URL(fileURLWithPath: directory + "/gamma.json"))
        let check = try await workspace.prefs("check")
        #expect(check.status == 4)
        #expect(check.standardError.hasPrefix("prefs: error: delta"), "\(check.standardError)")
        let store = try await PreferencesStore(fileURL: workspace.store, liveReads: false)
        await store.declare(
            try PreferencesManifest(
                jsonText: #"{"format": 1, "keys": {"interval_ms": {"type": "int", "default": 10}}}"#
            ))
        let messages = store.problems.map(\.message)
        #expect(messages.count == 1, "\(messages)")
        #expect(messages.allSatisfy { $0.contains("program gamma") }, "\(messages)")
    }
}

/// Whether process `pid` has an inotify watch (Linux: its fdinfo lists
/// `inotify wd:` lines).
func hasDirectoryWatch(_ pid: Int32) -> Bool {
    let directory = "/proc/\(pid)/fdinfo"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
        return false
    }
    return names.contains { name in
        (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8))?.contains(
            "inotify wd:") == true
    }
}
