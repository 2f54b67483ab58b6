import Foundation
import Preferences
import PreferencesTestSupport
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The children of a test run die with it: a run killed with SIGKILL (a CI
/// timeout, a hang ended by hand) leaves no `prefs … watch` or etcd member
/// running, because every child starts through `setpriv --pdeathsig KILL`
/// from one thread that lives as long as the test process. And a child's
/// pipes are its own: no other child holds them open.
@Suite(
    .enabled(
        if: ChildCommand.diesWithTheTests,
        "needs util-linux's setpriv to set a child's parent-death signal"),
    .scaledTimeLimit(minutes: 2))
struct ChildRunnerTests {
    /// Set in the test process that ``aKilledTestProcessLeavesNoChild()``
    /// starts: there the test starts the child and waits to be killed.
    static let roleVariable = "PREFS_TEST_CHILD_RUNNER_PARENT"
    static let pidPrefix = "child pid: "

    /// Whether `pid` is gone: no such process, or a zombie that its new
    /// parent has not reaped yet (a container's init may never reap it).
    static func isGone(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return errno == ESRCH }
        let stat = contents(URL(fileURLWithPath: "/proc/\(pid)/stat")) ?? ""
        // "pid (name) S …": the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[close...].dropFirst(2).first == "Z"
    }

    /// This test runs again in a test process of its own, which starts
    /// `prefs watch` through the runner and prints its pid; that process is
    /// killed with SIGKILL mid-run, and the watch must go with it.
    @Test func aKilledTestProcessLeavesNoChild() async throws {
        if ProcessInfo.processInfo.environment[Self.roleVariable] != nil {
            try await startAWatchAndWaitToBeKilled()
            return
        }
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        var environment = cleanEnvironment()
        environment[Self.roleVariable] = "1"
        let parent = try ChildCommand(
            program: testBinary,
            [
                "--testing-library", "swift-testing",
                "--filter", "ChildRunnerTests/aKilledTestProcessLeavesNoChild",
            ],
            environment: environment, output: .merged
        ).start()
        var pid: Int32?
        while pid == nil, let line = try await parent.nextLine(timeout: .seconds(60)) {
            if let range = line.range(of: Self.pidPrefix) {
                pid = Int32(line[range.upperBound...].prefix(while: \.isNumber))
            }
        }
        let child = try #require(pid, "no child pid from the test process: \(parent.transcript)")
        #expect(!Self.isGone(child), "the watch was not running before the kill")

        parent.kill(SIGKILL)
        #expect(try await parent.exit(timeout: .seconds(30)) == SIGKILL)
        #expect(
            await eventually(seconds: 10) { Self.isGone(child) },
            "prefs watch (pid \(child)) was still running 10 s after its test process was killed")
        // Never leave it behind, whatever the outcome.
        if !Self.isGone(child) { sendSignal(SIGKILL, to: child) }
    }

    /// In the test process started above: a watch that runs until killed.
    private func startAWatchAndWaitToBeKilled() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("prefs.json").path
        try await runChild("prefs", ["--file", store, "set", "a", "1"])
        let watch = try RunningProcess("prefs", ["--file", store, "watch"])
        // The watch prints the current value once it is watching.
        _ = try await watch.nextLine(timeout: .seconds(30))
        // Unbuffered, unlike print's into a pipe.
        FileHandle.standardOutput.write(
            Data((Self.pidPrefix + String(watch.process.processIdentifier) + "\n").utf8))
        // Killed long before: this deadline only ends a process left alone.
        _ = try? await watch.exit(timeout: .seconds(60))
    }

    /// Linux sends the parent-death signal when the thread that started the
    /// child ends: a child started from a thread that ends at once (as a
    /// thread of Dispatch's pool may) still runs and answers.
    @Test func aChildOutlivesTheThreadThatStartedIt() async throws {
        let started = Locked<(RunningProcess, String)?>(nil)
        await onThreads(1) { _ in
            let child = try? ChildCommand(program: "/bin/cat", [], input: .open).start()
            // "PID/task/TID": this thread's directory under /proc.
            let task = try? FileManager.default.destinationOfSymbolicLink(
                atPath: "/proc/thread-self")
            started.withLock { $0 = child.map { ($0, task ?? "") } }
        }
        let (child, task) = try #require(started.value, "cat did not start")
        defer { child.kill() }
        #expect(
            await eventually(seconds: 10) {
                !task.isEmpty && !FileManager.default.fileExists(atPath: "/proc/" + task)
            }, "the thread that started cat did not end")
        child.send("still here\n")
        #expect(try await child.nextLine(timeout: .seconds(10)) == "still here")
        child.closeInput()
        #expect(try await child.exit(timeout: .seconds(10)) == 0)
    }

    /// A program this process starts by any means, even one that passes on
    /// every descriptor it has, holds none of a child's pipes: closing the
    /// child's input ends it while that program runs on. (Foundation's
    /// pipes passed on: a `prefs set` that had long exited seemed to run
    /// until its deadline, its output held open by an etcd member started
    /// at the same moment.)
    @Test func aChildsPipesStayOutOfEveryOtherProgram() async throws {
        let child = try ChildCommand(program: "/bin/cat", [], input: .open).start()
        defer { child.kill() }
        // `sleep`, spawned with no file actions: it inherits every
        // descriptor of this process that does not close on exec.
        var pid = pid_t()
        let words: [String] = ["/bin/sleep", "600"]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        try #require(posix_spawn(&pid, "/bin/sleep", nil, nil, argv, environ) == 0)
        defer {
            sendSignal(SIGKILL, to: pid)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        child.send("still here\n")
        #expect(try await child.nextLine(timeout: .seconds(10)) == "still here")
        child.closeInput()
        #expect(try await child.exit(timeout: .seconds(10)) == 0, "cat read no end of input")
        #expect(try await child.nextLine(timeout: .seconds(10)) == nil, "cat's output did not end")
    }
}
