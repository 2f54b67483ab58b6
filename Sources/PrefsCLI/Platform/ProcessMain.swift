import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PrefsTool {
    /// Runs this process's command line and exits with its status: the
    /// `main` of `prefs` and `prefs-tls`.
    ///
    /// The command starts on the calling thread and keeps it until it
    /// first waits for something, which a command on a file store usually
    /// never does: it prints and exits without starting another thread. An
    /// `async` top-level `main` would first hand the main thread to
    /// Dispatch and run the command on the concurrency runtime's threads,
    /// about half a millisecond of the three a `prefs get` took (P12 in
    /// Sources/Preferences/Preferences.docc/Performance.md). A command that does wait (etcd, `watch`,
    /// `edit`) goes on on those threads while the main thread serves
    /// Dispatch's main queue, as under an `async` `main`.
    public func runThisProcess() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        start(arguments)
        dispatchMain()
    }

    /// Starts the command; not isolated to the main actor, so that the
    /// task runs on this thread from its first line.
    private nonisolated func start(_ arguments: [String]) {
        Task.immediate { exit(await run(arguments).rawValue) }
    }
}
