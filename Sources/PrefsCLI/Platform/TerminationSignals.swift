import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Catches SIGINT and SIGTERM, for `prefs watch`.
///
/// The signals' default action (ending the process at once) is turned off
/// and they are delivered through Dispatch sources instead, so the command
/// can finish its output and exit with status 0. The tool's other system
/// calls are beside this file: starting the editor, its user and its copy's
/// directory (for `prefs edit`).
enum TerminationSignals {
    /// Starts catching the signals now; the stream yields at each one
    /// caught from here on, whenever it is read.
    static func caught() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        // Blocked in this thread first (Dispatch's threads block them
        // already): one that comes before Dispatch has registered the
        // sources, which it does on its own thread after `resume()`, stays
        // pending for them instead of being dropped as ignored.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for number in [SIGINT, SIGTERM] { sigaddset(&blocked, number) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        let queue = DispatchQueue(label: "prefs.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        // The sources live as long as the stream is read.
        let held = SignalSources(sources)
        continuation.onTermination = { _ in held.cancel() }
        return stream
    }
}

/// The signal sources of one stream: set once, then only cancelled, which
/// Dispatch allows from any thread.
private final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }

    func cancel() { sources.forEach { $0.cancel() } }
}
