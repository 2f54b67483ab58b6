import Dispatch

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

extension PrefsTool {
    /// Runs this process's command line and exits with its status: the
    /// `main` of `prefs` (not of `prefs-tls`: see its `main.swift`).
    ///
    /// The command starts on the calling thread and keeps it until it
    /// first waits for something, which a command on a file store usually
    /// never does: it prints and exits without starting another thread. An
    /// `async` top-level `main` would first hand the main thread to
    /// Dispatch and run the command on the concurrency runtime's threads,
    /// about half a millisecond of the three a `prefs get` took (P12 in
    /// Sources/Preferences/Preferences.docc/Performance.md). A command that
    /// does wait (etcd, `watch`, `edit`) goes on on those threads while the
    /// main thread serves Dispatch's main queue, as under an `async` `main`.
    public func runThisProcess() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Not isolated to the main actor (this method is not), so the task
        // runs here from its first line.
        Task.immediate { exit(await run(arguments).rawValue) }
        dispatchMain()
    }

    /// This process's environment variables, as
    /// `ProcessInfo.processInfo.environment` gives them; on Linux read
    /// from `environ`, without starting `ProcessInfo`, which measured about a
    /// tenth of a millisecond of each `prefs` start (the first of two
    /// values for one name wins, as `getenv` finds it).
    public static var processEnvironment: [String: String] {
        #if canImport(Glibc)
            var variables: [String: String] = [:]
            var entry = environ
            while let pointer = entry.pointee {
                let text = String(cString: pointer)
                if let equals = text.firstIndex(of: "=") {
                    let name = String(text[..<equals])
                    if variables[name] == nil {
                        variables[name] = String(text[text.index(after: equals)...])
                    }
                }
                entry += 1
            }
            return variables
        #else
            return ProcessInfo.processInfo.environment
        #endif
    }
}
