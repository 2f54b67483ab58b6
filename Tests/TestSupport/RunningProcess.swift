import Foundation
import Preferences
import PreferencesTesting
import ProcessSpawning
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The result of a finished child process.
package struct ProcessOutput: Sendable {
    package var status: Int32
    package var standardOutput: String
    package var standardError: String
}

/// A started child (``ChildCommand/start()``). Its outputs are read on
/// threads of their own. Every wait has a deadline (scaled by
/// ``TestTime/scale``): a child still running at it is killed and the wait
/// throws ``DeadlineExceeded`` with the command line and what the child
/// printed. The async waits hold no thread of Swift's cooperative pool; the
/// blocking ones are for threads of their own.
package final class RunningProcess: @unchecked Sendable {
    private struct State {
        var exited = false
        var openOutputs = 2
        var waiters: [(forOutputs: Bool, wake: @Sendable () -> Void)] = []
    }

    // Configured in `init` and only read afterwards.
    package let process = Process()
    /// Standard output (with standard error, when merged), line by line.
    package let lines: ChildOutput
    private let errors: ChildOutput
    private let input: FileHandle?
    private let state: Locked<State>
    /// The command as a reader would type it, for failure messages.
    package let commandLine: String

    /// Starts `product` (a built product such as `prefs`) with `arguments`;
    /// its standard error goes to the test's own.
    package convenience init(
        _ product: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws {
        try self.init(
            ChildCommand(product, arguments, environment: environment, output: .errorsShown))
    }

    init(_ command: ChildCommand) throws {
        commandLine = command.commandLine
        // `setpriv` starts the program: one that is missing must fail here,
        // at launch, as it would without it, not as setpriv's exit status.
        guard FileManager.default.isExecutableFile(atPath: command.executable.path) else {
            throw ChildCommand.LaunchFailure(
                description:
                    "cannot start \(commandLine): no executable file at \(command.executable.path)")
        }
        process.executableURL = command.launched.executable
        process.arguments = command.launched.arguments
        process.environment = command.environment
        // Both ends of each pipe close on exec: a child that another test
        // starts meanwhile never holds them (``closeOnExecPipe()``).
        let pipes = (try ChildPipe(commandLine), try ChildPipe(commandLine))
        var log: FileHandle?
        switch command.output {
        case .separate:
            (process.standardOutput, process.standardError) = (pipes.0.writing, pipes.1.writing)
        case .merged:
            (process.standardOutput, process.standardError) = (pipes.0.writing, pipes.0.writing)
        case .errorsShown:
            (process.standardOutput, process.standardError) = (
                pipes.0.writing, FileHandle.standardError
            )
        case .log(let path):
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            log = FileHandle(forWritingAtPath: path)
            (process.standardOutput, process.standardError) = (log, log)
        }
        let inputPipe: ChildPipe? =
            if case .none = command.input { nil } else { try ChildPipe(commandLine) }
        process.standardInput = inputPipe?.reading ?? FileHandle.nullDevice
        let state = Locked(State())
        self.state = state
        // The process holds its handler, and the reader threads their
        // callbacks: neither holds this object, which goes with its test.
        process.terminationHandler = { _ in Self.settle(state) { $0.exited = true } }
        // From the one thread that outlives every test: the child's
        // parent-death signal follows the thread that started it.
        try SpawningThread.run { [process] in try process.run() }
        // The child has its own copies of its ends (and of the log); keep
        // none here, so its output ends when it exits.
        try? log?.close()
        try? pipes.0.writing.close()
        try? pipes.1.writing.close()
        try? inputPipe?.reading.close()
        let ended: @Sendable () -> Void = { Self.settle(state) { $0.openOutputs -= 1 } }
        let readsOutput = log == nil
        let readsErrors = if case .separate = command.output { true } else { false }
        lines = ChildOutput(
            readsOutput ? pipes.0.reading : nil, name: commandLine, ended: ended)
        errors = ChildOutput(
            readsErrors ? pipes.1.reading : nil, name: commandLine, ended: ended)
        input = if case .open = command.input { inputPipe?.writing } else { nil }
        if case .text(let text) = command.input, let writer = inputPipe?.writing {
            // On a thread of its own: a large input must not block the caller.
            Thread {
                try? writer.write(contentsOf: Data(text.utf8))
                try? writer.close()
            }.start()
        }
    }

    private static func settle(_ state: Locked<State>, _ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [@Sendable () -> Void] in
            change(&state)
            guard state.exited else { return [] }
            let all = state.openOutputs == 0
            defer { state.waiters.removeAll { all || !$0.forOutputs } }
            return state.waiters.filter { all || !$0.forOutputs }.map(\.wake)
        }
        for wake in ready { wake() }
    }

    /// Calls `wake` once the child has exited and, `forOutputs`, its outputs have ended.
    private func whenEnded(forOutputs: Bool, _ wake: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.exited && (!forOutputs || state.openOutputs == 0) { return true }
            state.waiters.append((forOutputs, wake))
            return false
        }
        if now { wake() }
    }

    /// Awaits the end for at most `timeout`, then kills the child and throws.
    private func ended(forOutputs: Bool, timeout: Duration) async throws {
        do {
            try await withDeadline(commandLine, timeout: timeout) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    self.whenEnded(forOutputs: forOutputs) { continuation.resume() }
                }
            }
        } catch is DeadlineExceeded {
            throw killed(after: timeout)
        }
    }

    /// Blocks for the end at most `timeout`, then kills the child and throws.
    @available(*, noasync, message: "await ended(forOutputs:timeout:)")
    private func blockingEnded(forOutputs: Bool, timeout: Duration) throws {
        let ended = DispatchSemaphore(value: 0)
        whenEnded(forOutputs: forOutputs) { ended.signal() }
        if ended.wait(timeout: .now() + TestTime.scaled(timeout).seconds) == .timedOut {
            throw killed(after: timeout)
        }
    }

    private func killed(after timeout: Duration) -> DeadlineExceeded {
        kill()
        return DeadlineExceeded(
            description: "\(commandLine) did not end within \(TestTime.scaled(timeout)) and was "
                + "killed; it printed: \"\(lines.transcript)\" and on standard error: "
                + "\"\(errors.transcript)\"")
    }

    /// Waits for the child to exit and returns its status.
    package func exit(timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await ended(forOutputs: false, timeout: timeout)
        return process.terminationStatus
    }

    /// ``exit(timeout:)`` for code on a thread of its own.
    @available(*, noasync, message: "use exit(timeout:)")
    package func wait(timeout: Duration = .seconds(120)) throws -> Int32 {
        try blockingEnded(forOutputs: false, timeout: timeout)
        return process.terminationStatus
    }

    /// Waits for the child to exit and its outputs to end; returns its
    /// status and everything it printed.
    package func result(timeout: Duration = .seconds(120)) async throws -> ProcessOutput {
        try await ended(forOutputs: true, timeout: timeout)
        return output
    }

    /// ``result(timeout:)`` for code on a thread of its own.
    @available(*, noasync, message: "use result(timeout:)")
    package func blockingResult(timeout: Duration = .seconds(120)) throws -> ProcessOutput {
        try blockingEnded(forOutputs: true, timeout: timeout)
        return output
    }

    private var output: ProcessOutput {
        ProcessOutput(
            status: process.terminationStatus, standardOutput: lines.transcript,
            standardError: errors.transcript)
    }

    /// Everything the child printed so far (on standard output).
    package var transcript: String { lines.transcript }

    /// The next line of output, or nil at its end.
    package func nextLine(timeout: Duration = .seconds(60)) async throws -> String? {
        try await lines.nextLine(timeout: timeout)
    }

    /// ``nextLine(timeout:)`` for code on a thread of its own.
    @available(*, noasync, message: "use nextLine(timeout:)")
    package func readLine(timeout: Duration = .seconds(60)) throws -> String? {
        try lines.blockingNextLine(timeout: timeout)
    }

    /// Writes `text` to the child's standard input (``ChildCommand/Input/open``).
    package func send(_ text: String) { try? input?.write(contentsOf: Data(text.utf8)) }

    /// Closes the child's standard input: it reads end of file.
    package func closeInput() { try? input?.close() }

    /// Sends `signal` to the child, unless it has exited (its pid may be
    /// another process's by now).
    package func kill(_ signal: Int32 = SIGKILL) {
        if !state.withLock({ $0.exited }) { sendSignal(signal, to: process.processIdentifier) }
    }
}

/// A pipe for one of a child's standard streams, made with
/// ``closeOnExecPipe()``: Foundation's `Pipe` makes ends that a child
/// started by another thread at the same moment inherits, and a `prefs`
/// that had long exited then seemed to run on until its deadline, its
/// output held open by an etcd member started meanwhile.
private struct ChildPipe {
    let reading: FileHandle
    let writing: FileHandle

    init(_ commandLine: String) throws {
        guard let (read, write) = closeOnExecPipe() else {
            throw ChildCommand.LaunchFailure(
                description:
                    "cannot start \(commandLine): pipe: \(String(cString: strerror(errno)))")
        }
        reading = FileHandle(fileDescriptor: read, closeOnDealloc: true)
        writing = FileHandle(fileDescriptor: write, closeOnDealloc: true)
    }
}

extension Duration {
    /// The duration in seconds, for dispatch deadlines.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
