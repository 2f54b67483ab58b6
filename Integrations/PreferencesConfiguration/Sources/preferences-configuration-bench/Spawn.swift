import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The main package's spawn helper (`SpawnedProcess`, `package` API) and `prefs-bench`'s
// `BenchFailure` cannot be imported by another package: this benchmark keeps its own.

/// A command that did not run as expected.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `path` with `arguments` through `posix_spawn`, its output sent to
/// /dev/null, and waits for it to exit, as a shell runs a command.
/// Returns the monotonic nanoseconds at which it was started and at which
/// `waitpid` saw it end.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> (
    started: UInt64, returned: UInt64
) {
    #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
    #else
        var actions = posix_spawn_file_actions_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp =
        ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let started = now()
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
    guard spawned == 0 else { throw BenchFailure("posix_spawn \(path) failed: \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let returned = now()
    guard (status >> 8) & 0xFF == 0, status & 0x7F == 0 else {
        throw BenchFailure("\(path) \(arguments.joined(separator: " ")) failed: status \(status)")
    }
    return (started, returned)
}

/// Nanoseconds on a monotonic clock.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
