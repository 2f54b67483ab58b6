#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pipe whose two ends close on `exec`: (read, write), or nil with
/// `errno` set.
///
/// On Linux both ends are made close-on-exec by the call that makes them
/// (`pipe2` with `O_CLOEXEC`), so a program that another thread starts
/// meanwhile never inherits either end, however it is started: a spawner
/// that closes descriptors itself (Foundation's `Process` closes those
/// open when it looks, not those opened while it spawns) included. A
/// child's output then ends when the child exits, and its input when this
/// process closes it. Elsewhere the flag is set just after (`pipe` and
/// `fcntl`), which leaves that moment open.
package func closeOnExecPipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [-1, -1]
    #if canImport(Glibc)
        if let pipe2 = pipeWithFlags {
            guard pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
            return (ends[0], ends[1])
        }
    #endif
    guard pipe(&ends) == 0 else { return nil }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (ends[0], ends[1])
}

#if canImport(Glibc)
    private typealias PipeWithFlags = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// glibc's `pipe2`, which Swift's Glibc module does not declare.
    private let pipeWithFlags: PipeWithFlags? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else {
            return nil
        }
        return unsafeBitCast(symbol, to: PipeWithFlags.self)
    }()
#endif
