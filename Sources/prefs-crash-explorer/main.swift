import CrashStates
import Dispatch
import Preferences

// prefs-crash-explorer: crash-state exploration in the manner of ALICE
// (Pillai et al., OSDI 2014). Each workload runs while the Platform shim
// records every call that changes the disk; for every crash point (after
// each call) and every on-disk state a persistence model allows there, the
// state is built in a scratch directory and opened with the real library
// in a fresh process (this program, with --check), which checks the
// store's invariants. Prints a table; exits 1 on any violation.
//
//   swift run -c release prefs-crash-explorer [--quick] [--workload NAME]
//       [--model posix|ext4] [--exhaustive-limit N] [--trace]
//   prefs-crash-explorer --check WORKLOAD DIRECTORY ACKNOWLEDGED   (the fresh process)
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let finished = DispatchSemaphore(value: 0)
nonisolated(unsafe) var status: Int32 = 0
Task.detached {
    do {
        status = try await runExplorer(Array(CommandLine.arguments.dropFirst()))
    } catch {
        StandardStream.error.write("prefs-crash-explorer: error: \(error)\n")
        status = 2
    }
    finished.signal()
}
finished.wait()
exit(status)
