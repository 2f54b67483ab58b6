#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program started with `posix_spawn`, as a shell starts one: the one
/// way the tool (its editor), the crash explorer (its checking children)
/// and the benchmark (everything it runs) start a process.
///
/// The child gets standard input, output and error as asked, and no other
/// descriptor of this process: a lock, a watch, a connection to etcd or
/// another child's pipe never stays open in it, or in anything it leaves
/// running. It starts with every signal unblocked and SIGINT, SIGQUIT,
/// SIGTERM and SIGPIPE at their default actions, whatever this process
/// does with them.
package struct SpawnedProcess: Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream: Sendable, Equatable {
        /// This process's own.
        case inherited
        /// A pipe, whose other end this process holds (``input``,
        /// ``output``, ``errors``) and closes.
        case pipe
        /// `/dev/null`.
        case discarded
        /// The file at this path, appended to (created when missing).
        case file(String)
    }

    /// How a child ended.
    package enum Ending: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case killed(signal: Int32)

        /// `exited with status 1`, `was killed by signal 9`.
        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let signal): "was killed by signal \(signal)"
            }
        }

        /// The exit status, or the number of the signal that ended it.
        package var code: Int32 {
            switch self {
            case .exited(let status): status
            case .killed(let signal): signal
            }
        }
    }

    /// The child's process ID.
    package let pid: pid_t
    /// This process's end of the child's standard input (``Stream/pipe``).
    package let input: Int32?
    /// This process's end of the child's standard output (``Stream/pipe``).
    package let output: Int32?
    /// This process's end of the child's standard error (``Stream/pipe``).
    package let errors: Int32?

    /// Starts `path` (an absolute path) with `arguments` (after its own
    /// name) and exactly `environment`.
    ///
    /// - Throws: ``SpawnFailure`` when a pipe cannot be made or the
    ///   program cannot be started.
    package init(
        _ path: String, _ arguments: [String], environment: [String: String],
        input: Stream = .inherited, output: Stream = .inherited, errors: Stream = .inherited
    ) throws(SpawnFailure) {
        var actions = FileActions()
        defer { actions.destroy() }
        var attributes = Attributes()
        defer { attributes.destroy() }
        var ends: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { for end in childEnds { close(end) } }
        for (target, stream) in [input, output, errors].enumerated() {
            let target = Int32(target)
            switch stream {
            case .inherited: break
            case .discarded:
                actions.open(target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY)
            case .file(let file): actions.open(target, file, O_WRONLY | O_CREAT | O_APPEND)
            case .pipe:
                guard let (read, write) = closeOnExecPipe() else {
                    let code = errno
                    for case let end? in ends { close(end) }
                    throw SpawnFailure(path: path, operation: "pipe", code: code)
                }
                let (childEnd, ownEnd) = target == 0 ? (read, write) : (write, read)
                actions.duplicate(childEnd, to: target)
                childEnds.append(childEnd)
                ends[Int(target)] = ownEnd
            }
        }
        actions.closeInheritedDescriptors()

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let code = posix_spawn(&pid, path, &actions.value, &attributes.value, argv, envp)
        guard code == 0 else {
            for case let end? in ends { close(end) }
            throw SpawnFailure(path: path, operation: "posix_spawn", code: code)
        }
        self.pid = pid
        (self.input, self.output, self.errors) = (ends[0], ends[1], ends[2])
    }

    /// Reads the child's standard output (``Stream/pipe``) to its end and
    /// closes this process's end of it; empty without a pipe.
    package func readOutputToEnd() -> [UInt8] {
        guard let output else { return [] }
        defer { close(output) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    /// Waits for the child to end, reaps it and returns how it ended.
    package func wait() -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            // Only EINTR is expected; anything else means the child is gone.
            if errno != EINTR { return .exited(-1) }
        }
        // WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift cannot call.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signal)
    }

    /// Waits for the child to end without reaping it: until ``wait()``, its
    /// pid stays its own (a zombie), so a signal sent meanwhile never
    /// reaches another process that was given the pid again.
    package func waitUntilEnded() {
        var ended = siginfo_t()
        while waitid(P_PID, id_t(pid), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    /// Sends `signal` to the child (which must not have been reaped yet).
    package func send(_ signal: Int32) {
        _ = kill(pid, signal)
    }
}

/// A child that could not be started: which call failed, with its `errno`.
package struct SpawnFailure: Error, Sendable, CustomStringConvertible {
    /// The program that was to run.
    package let path: String
    /// `pipe` or `posix_spawn`.
    package let operation: String
    /// The error number.
    package let code: Int32

    /// The system's text for ``code``.
    package var message: String { String(cString: strerror(code)) }

    /// `cannot start /usr/bin/vi: No such file or directory`.
    package var description: String {
        operation == "posix_spawn"
            ? "cannot start \(path): \(message)" : "cannot start \(path): \(operation): \(message)"
    }
}
