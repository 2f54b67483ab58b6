import Foundation
import Preferences
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child run to completion. Its two outputs are collected chunk by chunk
/// on threads of their own, so a wait that runs out of time can say what
/// the child printed so far.
package final class FinishingChild: @unchecked Sendable {
    private struct State {
        package var output: [UInt8] = []
        package var errors: [UInt8] = []
        package var openOutputs = 2
        package var exited = false
        package var waiters: [@Sendable () -> Void] = []
        package var finished: Bool { exited && openOutputs == 0 }
    }

    // `process` is configured in `init` and only read afterwards.
    private let process = Process()
    private let state = Locked(State())
    /// The command as a reader would type it, for failure messages.
    package let commandLine: String

    /// Starts `product` (a built product such as `prefs`) with `arguments`;
    /// with `user`, as that uid and gid through `setpriv`. `input` is written
    /// to its standard input, which is then closed.
    package convenience init(
        _ product: String, _ arguments: [String], environment: [String: String]?,
        input: String?, user: UInt32?
    ) throws {
        let shown =
            ([product] + arguments).map(Self.quoted).joined(separator: " ")
            + (user.map { " (as uid \($0))" } ?? "")
        if let user {
            try self.init(
                executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
                [
                    "--reuid=\(user)", "--regid=\(user)", "--clear-groups",
                    productURL(product).path,
                ] + arguments, shownAs: shown, environment: environment, input: input)
        } else {
            try self.init(
                executable: productURL(product), arguments, shownAs: shown,
                environment: environment, input: input)
        }
    }

    /// Starts the program at `executable` with `arguments`; failures show
    /// the command as `shownAs` (the program and its arguments by default).
    package init(
        executable: URL, _ arguments: [String], shownAs: String? = nil,
        environment: [String: String]? = nil, input: String? = nil
    ) throws {
        commandLine =
            shownAs ?? ([executable.path] + arguments).map(Self.quoted).joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment ?? cleanEnvironment()
        let outputs = (Pipe(), Pipe())
        process.standardOutput = outputs.0
        process.standardError = outputs.1
        let inputPipe = input.map { _ in Pipe() }
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        // Weak: the process holds its handler, and a strong reference would
        // keep this object, the process and its pipes for the run's life.
        process.terminationHandler = { [weak self] _ in self?.settle { $0.exited = true } }
        try process.run()
        for (pipe, isError) in [(outputs.0, false), (outputs.1, true)] {
            let reader = pipe.fileHandleForReading
            Thread { [self] in
                while true {
                    let chunk = reader.nextChunk()
                    if chunk.isEmpty { break }
                    state.withLock { state in
                        if isError {
                            state.errors += chunk
                        } else {
                            state.output += chunk
                        }
                    }
                }
                try? reader.close()
                settle { $0.openOutputs -= 1 }
            }.start()
        }
        if let input, let writer = inputPipe?.fileHandleForWriting {
            // On a thread of its own: a large input must not block the caller.
            Thread {
                try? writer.write(contentsOf: Data(input.utf8))
                try? writer.close()
            }.start()
        }
    }

    private static func quoted(_ argument: String) -> String {
        let plain =
            !argument.isEmpty
            && argument.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) || "-_./=:,+@%".unicodeScalars.contains($0)
            }
        return plain ? argument : "'" + argument.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    private func settle(_ change: (inout State) -> Void) {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            change(&state)
            guard state.finished else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Calls `body` once the child has exited and both outputs have ended.
    package func whenFinished(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.finished { return true }
            state.waiters.append(body)
            return false
        }
        if now { body() }
    }

    /// Returns once the child has exited and both outputs have ended.
    package func finished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenFinished { continuation.resume() }
        }
    }

    /// Everything the child printed so far, on both outputs.
    package var printed: String {
        let (output, errors) = state.withLock { ($0.output, $0.errors) }
        return "it printed: \"\(String(decoding: output, as: UTF8.self))\""
            + " and on standard error: \"\(String(decoding: errors, as: UTF8.self))\""
    }

    /// Kills the child if it is still running.
    package func kill() {
        if !state.withLock({ $0.exited }) { sendSignal(SIGKILL, to: process.processIdentifier) }
    }

    /// The deadline failure: the command line and what the child printed.
    package func deadlineExceeded(_ timeout: Duration) -> DeadlineExceeded {
        DeadlineExceeded(
            description: "\(commandLine) did not end within \(timeout) and was killed; \(printed)")
    }

    /// Blocks the calling thread (never one of the cooperative pool's)
    /// until the child ends, or for at most `timeout`: then it is killed and
    /// an issue records the command line and what it printed.
    @available(*, noasync, message: "await finished() instead")
    package func blockingResult(timeout: Duration, sourceLocation: SourceLocation) -> ProcessOutput
    {
        let ended = DispatchSemaphore(value: 0)
        whenFinished { ended.signal() }
        let timeout = TestTime.scaled(timeout)
        if ended.wait(timeout: .now() + timeout.seconds) == .timedOut {
            kill()
            Issue.record(
                Comment(rawValue: deadlineExceeded(timeout).description),
                sourceLocation: sourceLocation)
            // Killed, it ends at once, unless something it started keeps its output open.
            _ = ended.wait(timeout: .now() + TestTime.scaled(seconds: 10))
        }
        return result()
    }

    /// Status and output; the status is -1 while the child runs.
    package func result() -> ProcessOutput {
        state.withLock { state in
            ProcessOutput(
                status: state.exited ? process.terminationStatus : -1,
                standardOutput: String(decoding: state.output, as: UTF8.self),
                standardError: String(decoding: state.errors, as: UTF8.self))
        }
    }
}

/// Runs a product to completion and returns its status and output. The
/// wait happens off the cooperative pool and has a deadline: a child still
/// running after `timeout` is killed and the call throws
/// ``DeadlineExceeded`` with the command line and what the child printed.
/// With `user`, the child runs as that uid and gid (through `setpriv`).
@discardableResult
package func runChild(
    _ product: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil, as user: UInt32? = nil, timeout: Duration = .seconds(120)
) async throws -> ProcessOutput {
    try await finish(
        FinishingChild(product, arguments, environment: environment, input: input, user: user),
        timeout: timeout)
}

/// Runs the program at `path` (a shell, a system tool) to completion, as
/// ``runChild(_:_:environment:input:as:timeout:)`` runs a product.
@discardableResult
package func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil,
    timeout: Duration = .seconds(60)
) async throws -> ProcessOutput {
    try await finish(
        FinishingChild(
            executable: URL(fileURLWithPath: path), arguments, environment: environment),
        timeout: timeout)
}

/// Awaits `child`'s end off the cooperative pool; kills it and throws
/// ``DeadlineExceeded`` with what it printed when `timeout` passes first.
private func finish(_ child: FinishingChild, timeout: Duration) async throws -> ProcessOutput {
    do {
        try await withDeadline(child.commandLine, timeout: timeout) { await child.finished() }
    } catch is DeadlineExceeded {
        child.kill()
        throw child.deadlineExceeded(TestTime.scaled(timeout))
    }
    return child.result()
}

/// ``runChild(_:_:environment:input:as:timeout:)`` for code on a thread of
/// its own (a `Thread` or a dispatch queue), which it blocks until the child
/// ends. From a task it records an issue: there it would hold a thread of
/// Swift's cooperative pool. A child still running after `timeout` is killed
/// and an issue records the command line and what it printed.
@available(*, noasync, message: "use runChild, which waits off the cooperative pool")
@discardableResult
package func run(
    _ product: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil, timeout: Duration = .seconds(120),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ProcessOutput {
    if withUnsafeCurrentTask(body: { $0 != nil }) {
        Issue.record(
            "run(\"\(product)\", …) blocks a thread of Swift's cooperative pool: use runChild",
            sourceLocation: sourceLocation)
    }
    let child = try FinishingChild(
        product, arguments, environment: environment, input: input, user: nil)
    return child.blockingResult(timeout: timeout, sourceLocation: sourceLocation)
}

extension Duration {
    /// The duration in seconds, for dispatch deadlines.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Runs a system program (`chmod`, `mv`, `dd` …) to completion and returns
/// its status, waiting off the cooperative pool. One still running after
/// `timeout` is killed and the call throws ``DeadlineExceeded`` with what it
/// printed. A missing program is status -1.
@discardableResult
package func runTool(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60))
    async throws -> Int32
{
    guard FileManager.default.isExecutableFile(atPath: path) else { return -1 }
    return try await runProgram(path, arguments, timeout: timeout).status
}

/// ``runTool(_:_:timeout:)`` for code on a thread of its own, such as a
/// store's transform on the store's queue, which it blocks; from a task it
/// records an issue. A program still running after `timeout` is killed and
/// an issue records what it printed.
@available(*, noasync, message: "await runTool, which waits off the cooperative pool")
@discardableResult
package func runTool(
    _ path: String, _ arguments: [String], timeout: Duration = .seconds(60),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> Int32 {
    if withUnsafeCurrentTask(body: { $0 != nil }) {
        Issue.record(
            "runTool(\"\(path)\", …) blocks a thread of Swift's cooperative pool: await it",
            sourceLocation: sourceLocation)
    }
    guard FileManager.default.isExecutableFile(atPath: path) else { return -1 }
    let child = try FinishingChild(executable: URL(fileURLWithPath: path), arguments)
    return child.blockingResult(timeout: timeout, sourceLocation: sourceLocation).status
}
