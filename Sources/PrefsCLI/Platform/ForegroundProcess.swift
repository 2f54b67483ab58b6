import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a program in this process's terminal and waits for it: the editor
/// of `prefs edit`.
///
/// The child inherits standard input, output and error, and stays in this
/// process's process group, so an editor such as `vi` owns the terminal
/// while it runs; no other descriptor of this process is passed on.
/// Meanwhile `prefs` ignores SIGINT and SIGQUIT, as `git`
/// does around its editor: a Ctrl-C typed into the editor is the editor's
/// to handle, and does not end `prefs` behind its back. The child starts
/// with every signal unblocked and SIGINT, SIGQUIT, SIGTERM and SIGPIPE at
/// their default actions.
enum ForegroundProcess {
    /// How the child ended.
    enum Ending: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case killed(signal: Int32)

        /// `exited with status 1`, `was killed by signal 9`.
        var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let signal): "was killed by signal \(signal)"
            }
        }
    }

    /// Starts `arguments[0]` (an absolute path) with `arguments` and
    /// `environment`, and returns how it ended.
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)`` when
    ///   it cannot be started.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> Ending {
        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
        }
        let pid = try spawn(arguments, environment: environment)
        return await awaitBlocking { wait(for: pid) }
    }

    private static func spawn(_ arguments: [String], environment: [String: String]) throws
        -> pid_t
    {
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        #if canImport(Darwin)
            var attributes: posix_spawnattr_t? = nil
            var actions: posix_spawn_file_actions_t? = nil
        #else
            var attributes = posix_spawnattr_t()
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Only standard input, output and error reach the editor: no
        // descriptor of the store (a lock, a watch, a connection to etcd)
        // stays open in it, or in anything it leaves running.
        #if canImport(Darwin)
            for descriptor in 0...2 { posix_spawn_file_actions_addinherit_np(&actions, descriptor) }
            flags |= POSIX_SPAWN_CLOEXEC_DEFAULT
        #else
            _ = closeFrom?(&actions, 3)
        #endif
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGQUIT, SIGTERM, SIGPIPE] { sigaddset(&defaults, number) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid = pid_t()
        let code = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard code == 0 else {
            throw PreferencesError.io(
                operation: "run", path: arguments[0], code: code,
                message: String(cString: strerror(code)))
        }
        return pid
    }

    #if !canImport(Darwin)
        private typealias CloseFrom =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and
        /// later), which Swift's Glibc module does not declare; nil where
        /// the C library has none, and then descriptors opened with
        /// O_CLOEXEC, as the library opens them all, are the only ones closed.
        private static let closeFrom: CloseFrom? = {
            let name = "posix_spawn_file_actions_addclosefrom_np"
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                return nil
            }
            return unsafeBitCast(symbol, to: CloseFrom.self)
        }()
    #endif

    private static func wait(for pid: pid_t) -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            // Only EINTR is expected; anything else means the child is gone.
            if errno != EINTR { return .exited(-1) }
        }
        // WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift cannot call.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signal)
    }
}

/// Runs blocking `body` (a `waitpid`, a read of the terminal) on a thread
/// of its own, never on one of Swift's few cooperative threads, and
/// returns its result.
func awaitBlocking<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        startThread { continuation.resume(returning: body()) }
    }
}
