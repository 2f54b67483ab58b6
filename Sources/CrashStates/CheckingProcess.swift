import Dispatch
import Preferences
import ProcessSpawning

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
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(path, arguments, environment: environment, output: .pipe)
        } catch {
            throw ExplorerError("\(error)")
        }
        let running = Locked(true)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            running.withLock { if $0 { child.send(SIGTERM) } }
        }
        let output = child.readOutputToEnd()
        // Waited for without reaping it, then marked ended, then reaped: the
        // timer signals the child or its zombie, never a reused pid.
        child.waitUntilEnded()
        running.withLock { $0 = false }
        let ending = child.wait()
        return CheckingProcess(output: output, status: ending.code)
    }
}
