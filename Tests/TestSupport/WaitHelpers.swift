import Foundation
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `body(index)` on `count` threads of their own (blocking child
/// processes must not occupy the few threads of Swift's concurrency pool)
/// and returns when all have finished.
package func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}

/// Checks `condition` every millisecond until it holds or `seconds`
/// (scaled by ``TestTime/scale``) pass; for synchronous reads, which have
/// no event to await.
package func eventually(seconds: Int = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = TestTime.deadline(in: .seconds(seconds))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Kills (after a SIGCONT, for a stopped one) and reaps `children`; free of
/// any test's state, so that the cleanup task of a failed test holds
/// nothing else of it.
package func stopChildren(_ children: [RunningProcess]) async throws {
    for child in children {
        child.kill(SIGCONT)
        child.kill(SIGKILL)
        _ = try await child.exit(timeout: .seconds(30))
    }
}

extension Trait where Self == TimeLimitTrait {
    /// A time limit of `minutes` times ``TestTime/scale``, rounded up to
    /// whole minutes (the unit Swift Testing's limits take): the limit of
    /// every test, scaled with its deadlines.
    package static func scaledTimeLimit(minutes: Int) -> Self {
        .timeLimit(.minutes(Int((Double(minutes) * TestTime.scale).rounded(.up))))
    }
}
