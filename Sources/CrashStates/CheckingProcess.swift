import Dispatch
import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This program run again as a child (`--check …`): its standard output,
/// read to the end, and how it ended.
struct CheckingProcess {
    /// What the child printed.
    var output: [UInt8]
    /// Its exit status, or the number of the signal that ended it.
    var status: Int32

    /// Runs this program with `arguments` and `environment`; after `timeout`
    /// the child is sent SIGTERM (a store that hangs on a state is a
    /// violation, not a hung run).
    static func run(_ arguments: [String], environment: [String: String], timeout: Double)
        throws -> CheckingProcess
    {
        guard let path = ownExecutablePath() else {
            throw ExplorerError("cannot find this program's executable")
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw ExplorerError("pipe: \(String(cString: strerror(errno)))")
        }
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else {
            throw ExplorerError("cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        let running = Locked(true)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [pid] in
            running.withLock { if $0 { _ = kill(pid, SIGTERM) } }
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output += buffer[..<count]
        }
        // Waited for without reaping it, then marked ended, then reaped: the
        // timer signals the child or its zombie, never a reused pid.
        var ended = siginfo_t()
        while waitid(P_PID, id_t(pid), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        running.withLock { $0 = false }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift cannot call.
        let signal = status & 0x7F
        return CheckingProcess(output: output, status: signal == 0 ? (status >> 8) & 0xFF : signal)
    }
}
