import Dispatch
import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waits for SIGINT or SIGTERM, for `prefs watch`.
///
/// The signals' default action (ending the process at once) is turned off
/// and they are delivered through Dispatch sources instead, so the command
/// can finish its output and exit with status 0. The tool's other system
/// calls are beside this file: starting the editor, its user and its copy's
/// directory (for `prefs edit`).
enum TerminationSignals {
    /// Returns at the first SIGINT or SIGTERM after the call.
    static func next() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(continuation)
            let queue = DispatchQueue(label: "prefs.signals")
            var sources: [any DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { once.resume() }
                source.resume()
                sources.append(source)
            }
            // The sources live as long as the process; `watch` ends it.
            once.keep(sources)
        }
    }
}

/// Resumes a continuation at most once, and keeps the signal sources alive.
private final class ResumeOnce: Sendable {
    private let state: Locked<(CheckedContinuation<Void, Never>?, [any DispatchSourceSignal])>

    init(_ continuation: CheckedContinuation<Void, Never>) {
        state = Locked((continuation, []))
    }

    func keep(_ sources: [any DispatchSourceSignal]) {
        state.withLock { $0.1 = sources }
    }

    func resume() {
        let pending = state.withLock { state in
            defer { state.0 = nil }
            return state.0
        }
        pending?.resume()
    }
}
