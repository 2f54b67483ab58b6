import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `path` with `arguments` through `posix_spawn`, reads its standard
/// output to the end, and waits for it: a whole process as a shell starts
/// one. Foundation's `Process` adds its own cost on the parent's side (on
/// Linux it closes every descriptor up to the limit in the child), which
/// is not the program's.
/// Returns the nanoseconds from the spawn to the exit, the exit status and
/// the number of lines printed.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> (
    nanoseconds: Double, status: Int32, lines: Int
) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw BenchFailure("pipe failed") }
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
    let envp =
        ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let started = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
    close(fds[1])
    defer { close(fds[0]) }
    guard spawned == 0 else { throw BenchFailure("posix_spawn \(path) failed: \(spawned)") }
    var lines = 0
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        lines += buffer[..<count].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started)
    return (elapsed, (status >> 8) & 0xFF, lines)
}

extension FileHandle {
    /// One line, read a byte at a time (the child's first line only).
    func readLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            let byte = readData(ofLength: 1)
            guard let first = byte.first else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if first == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
    }
}
