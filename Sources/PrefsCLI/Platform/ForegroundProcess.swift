import Preferences
import ProcessSpawning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a program in this process's terminal and waits for it: the editor
/// of `prefs edit`.
///
/// The child (a ``SpawnedProcess``) inherits standard input, output and
/// error, and stays in this process's process group, so an editor such as
/// `vi` owns the terminal while it runs; no other descriptor of this
/// process is passed on. Meanwhile `prefs` ignores SIGINT and SIGQUIT, as
/// `git` does around its editor: a Ctrl-C typed into the editor is the
/// editor's to handle, and does not end `prefs` behind its back. The child
/// starts with every signal unblocked and SIGINT, SIGQUIT, SIGTERM and
/// SIGPIPE at their default actions.
enum ForegroundProcess {
    /// How the child ended.
    typealias Ending = SpawnedProcess.Ending

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
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(
                arguments[0], Array(arguments.dropFirst()), environment: environment)
        } catch {
            throw PreferencesError.io(
                operation: "run", path: error.path, code: error.code, message: error.message)
        }
        return await awaitBlocking { child.wait() }
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
