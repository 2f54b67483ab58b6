import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pipe for one of a child's standard streams whose two ends close on
/// exec, made at once on Linux (`pipe2`). Foundation's `Pipe` makes ends
/// that a child started by another test at the same moment inherits, which
/// then holds a finished child's output open. (The main package's
/// `closeOnExecPipe()` is `package` API this package cannot reach.)
struct ChildPipe {
    let reading: FileHandle
    let writing: FileHandle

    init() throws {
        var ends: [Int32] = [-1, -1]
        #if canImport(Glibc)
            guard let pipe2 = pipeWithFlags, pipe2(&ends, O_CLOEXEC) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        #else
            guard pipe(&ends) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        #endif
        reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        writing = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
    }
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
