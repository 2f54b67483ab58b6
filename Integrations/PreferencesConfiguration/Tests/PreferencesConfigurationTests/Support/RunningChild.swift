import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process that runs while a test talks to it: its standard output
/// and standard error are read line by line on threads of their own, a
/// test awaits the line it expects, sends signals and awaits the exit, each
/// wait with a deadline (scaled by ``testTimeScale``). A child still
/// running when the value goes away is killed.
final class RunningChild: Sendable {
    /// Which of the child's outputs a line came from.
    enum Stream: Sendable { case output, error }

    /// How the child ended.
    struct Exit: Sendable, Equatable, CustomStringConvertible {
        /// The exit status, or the number of the signal that ended it.
        var status: Int32
        var bySignal: Bool
        var description: String { bySignal ? "killed by signal \(status)" : "exit \(status)" }
    }

    fileprivate struct State {
        var output: [String] = []
        var error: [String] = []
        var exited: Exit?
        var openOutputs = 2
        /// How the child ended, once it has and both outputs are read to their end.
        var exit: Exit? { openOutputs == 0 ? exited : nil }

        mutating func append(_ line: String, to stream: Stream) {
            if stream == .output { output.append(line) } else { error.append(line) }
        }
    }

    /// The state, apart from the child's value: its reader threads and
    /// termination handler hold this, not the child, which goes with its
    /// test. Waiters are woken at each change.
    private final class Shared: Sendable {
        private struct Guarded {
            var state = State()
            var version: UInt64 = 0
            var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter: UInt64 = 0
        }
        private let guarded = Mutex(Guarded())

        var state: (State, version: UInt64) { guarded.withLock { ($0.state, $0.version) } }

        func change(_ body: (inout State) -> Void) {
            let waiters = guarded.withLock { guarded in
                body(&guarded.state)
                guarded.version += 1
                defer { guarded.waiters = [:] }
                return Array(guarded.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Returns after the first change past `version`, or once the task
        /// is cancelled.
        func changed(after version: UInt64) async {
            let id = guarded.withLock { guarded -> UInt64 in
                guarded.nextWaiter += 1
                return guarded.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let now = guarded.withLock { guarded -> Bool in
                        if guarded.version != version || Task.isCancelled { return true }
                        guarded.waiters[id] = waiter
                        return false
                    }
                    if now { waiter.resume() }
                }
            } onCancel: {
                guarded.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    let process: Process
    /// The command as a reader would type it, for failure messages.
    let commandLine: String
    private let shared = Shared()

    /// Starts `executable` with `arguments` and `environment`; with `user`,
    /// as that uid and gid through `setpriv` (root only).
    init(
        _ executable: URL, _ arguments: [String], environment: [String: String],
        user: UInt32? = nil
    ) throws {
        process = Process()
        if let user {
            process.executableURL = URL(fileURLWithPath: setprivPath)
            process.arguments =
                ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", executable.path]
                + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.environment = environment
        commandLine =
            ([executable.lastPathComponent] + arguments).joined(separator: " ")
            + (user.map { " (as uid \($0))" } ?? "")
        let output = try ChildPipe()
        let error = try ChildPipe()
        process.standardOutput = output.writing
        process.standardError = error.writing
        process.standardInput = FileHandle.nullDevice
        let shared = self.shared
        process.terminationHandler = { process in
            let exit = Exit(
                status: process.terminationStatus,
                bySignal: process.terminationReason == .uncaughtSignal)
            shared.change { $0.exited = exit }
        }
        try process.run()
        // The child has its own copies: its outputs end when it exits.
        try? output.writing.close()
        try? error.writing.close()
        for (pipe, stream) in [(output, Stream.output), (error, Stream.error)] {
            let reading = pipe.reading
            Thread {
                var pending = Data()
                while case let data = reading.availableData, !data.isEmpty {
                    pending.append(data)
                    while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[..<end], as: UTF8.self)
                        pending.removeSubrange(...end)
                        shared.change { $0.append(line, to: stream) }
                    }
                }
                let rest = pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
                shared.change { state in
                    if let rest { state.append(rest, to: stream) }
                    state.openOutputs -= 1
                }
            }.start()
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var pid: Int32 { process.processIdentifier }

    /// The lines the child has printed on `stream` so far.
    func lines(_ stream: Stream) -> [String] {
        let state = shared.state.0
        return stream == .output ? state.output : state.error
    }

    /// Sends `signal` to the child.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Awaits the first line on `stream` that `matches`, for at most
    /// `deadline` (scaled); throws ``ChildWaitFailed`` naming `what`, with
    /// what the child printed, or ``ChildEnded`` when it exits first.
    @discardableResult
    func line(
        on stream: Stream, _ what: String, within deadline: Duration = .seconds(30),
        where matches: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await awaiting("\(what) from `\(commandLine)`", within: deadline) { state in
            let lines = stream == .output ? state.output : state.error
            if let line = lines.first(where: matches) { return line }
            if let exit = state.exit {
                throw ChildEnded(commandLine: self.commandLine, exit: exit, printed: self.printed)
            }
            return nil
        }
    }

    /// Awaits the child's end for at most `deadline` (scaled).
    func exit(within deadline: Duration = .seconds(30)) async throws -> Exit {
        try await awaiting("`\(commandLine)` to exit", within: deadline) { $0.exit }
    }

    /// Everything the child printed so far, for failure messages.
    var printed: String {
        let state = shared.state.0
        return "standard output:\n\(state.output.joined(separator: "\n"))\n"
            + "standard error:\n\(state.error.joined(separator: "\n"))"
    }

    private func awaiting<T: Sendable>(
        _ what: String, within deadline: Duration,
        _ found: @escaping @Sendable (State) throws -> T?
    ) async throws -> T {
        let shared = self.shared
        do {
            return try await withDeadline(deadline, progress: named(what)) { _ in
                while true {
                    let (state, version) = shared.state
                    if let value = try found(state) { return value }
                    await shared.changed(after: version)
                    try Task.checkCancellation()
                }
            }
        } catch let error as DeadlineExceeded {
            throw ChildWaitFailed(waited: error, printed: printed)
        }
    }
}

/// A wait on a child that ran past its deadline, with what the child printed.
struct ChildWaitFailed: Error, CustomStringConvertible {
    var waited: DeadlineExceeded
    var printed: String
    var description: String { "\(waited)\n\(printed)" }
}

/// A child that exited while a test waited for a line.
struct ChildEnded: Error, CustomStringConvertible {
    var commandLine: String
    var exit: RunningChild.Exit
    var printed: String
    var description: String { "`\(commandLine)` ended (\(exit)) first\n\(printed)" }
}

/// Where `setpriv` (util-linux) is: it starts a child as another user.
let setprivPath = "/usr/bin/setpriv"

/// Whether a child can run as another user here: as root, with `setpriv`.
var canRunAsAnotherUser: Bool {
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: setprivPath)
}

/// The unprivileged user the tests run a service as (`nobody`).
let serviceUser: UInt32 = 65534
