import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Waits with deadlines that never hold a thread of Swift's cooperative pool:
// what every check of the contract, and the package's own tests, wait with.
// `package`, not `public`: they are how this package tests itself, not part
// of the product.

/// How much longer than written every deadline of the tests is: the
/// environment's `PREFS_TEST_TIME_SCALE` (a number ≥ 1; 1 when unset).
///
/// Every wait in the contract and the package's tests takes its deadline
/// through this one factor, so a machine that is slower, busier or
/// instrumented (ThreadSanitizer) raises one number instead of many. A
/// deadline only bounds a wait that should end; no outcome depends on it.
package enum TestTime {
    package static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["PREFS_TEST_TIME_SCALE"],
            let value = Double(text), value >= 1
        else { return 1 }
        return value
    }()

    /// `duration` times ``scale``.
    package static func scaled(_ duration: Duration) -> Duration { duration * scale }

    /// `seconds` times ``scale``, for dispatch and `Date` deadlines.
    package static func scaled(seconds: Double) -> Double { seconds * scale }

    /// The instant `duration` (scaled) from now.
    package static func deadline(in duration: Duration) -> ContinuousClock.Instant {
        .now + scaled(duration)
    }
}

/// A wait that ran out of time; says what it waited for and what the child
/// printed. Its description begins "deadline exceeded: ", which tells a
/// wait that ran out from an assertion that failed (`scripts/mutants.sh`
/// counts only the latter as catching a bug).
package struct DeadlineExceeded: Error, CustomStringConvertible {
    package let description: String
    package init(description: String) { self.description = "deadline exceeded: \(description)" }
}

/// The first of two outcomes wins; the other is dropped.
private final class Race<Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Result<Value, any Error>?, Never>
    private let state = Locked<(Waiter?, Task<Void, Never>?)>((nil, nil))

    fileprivate func start(_ continuation: CheckedContinuation<Result<Value, any Error>?, Never>) {
        state.withLock { $0.0 = continuation }
    }

    fileprivate func setTimer(_ timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            if state.0 == nil { return true }
            state.1 = timer
            return false
        }
        if finished { timer.cancel() }
    }

    /// Hands on `result` (nil: the time ran out) unless the other side came first.
    fileprivate func finish(_ result: Result<Value, any Error>?) {
        let (continuation, timer) = state.withLock { state in
            defer { state = (nil, nil) }
            return state
        }
        timer?.cancel()
        continuation?.resume(returning: result)
    }
}

/// The one race of the package's waits against their deadlines: calls
/// `start` with a function to hand its outcome to (once, from any thread
/// or task), and returns that outcome, or nil when `timeout` (taken as it
/// is: scale it first) passes before it. What `start` began is left to
/// finish on its own.
package func outcome<Value: Sendable>(
    within timeout: Duration,
    _ start: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
) async -> Result<Value, any Error>? {
    let race = Race<Value>()
    return await withCheckedContinuation { continuation in
        race.start(continuation)
        start { race.finish($0) }
        race.setTimer(
            Task {
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                race.finish(nil)
            })
    }
}

/// Runs blocking `body` on a thread of its own (never on Swift's
/// cooperative pool) and awaits its result for at most `timeout` (scaled
/// by ``TestTime/scale``). On time
/// out it throws ``DeadlineExceeded`` naming `what` and `detail()`; the
/// thread is left to finish on its own.
package func onOwnThread<Value: Sendable>(
    _ what: String, timeout: Duration = .seconds(120),
    detail: @escaping @Sendable () -> String = { "" },
    _ body: @escaping @Sendable () throws -> Value
) async throws -> Value {
    let timeout = TestTime.scaled(timeout)
    let result = await outcome(within: timeout) { finish in
        startThread { finish(Result { try body() }) }
    }
    guard let result else {
        throw DeadlineExceeded(description: "\(what): no result within \(timeout)\(detail())")
    }
    return try result.get()
}

/// Awaits `body` for at most `timeout` (scaled by ``TestTime/scale``); on time out throws
/// ``DeadlineExceeded`` naming `what` (the body is left to finish on its own).
package func withDeadline<Value: Sendable>(
    _ what: String, timeout: Duration = .seconds(60),
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let timeout = TestTime.scaled(timeout)
    let result = await outcome(within: timeout) { finish in
        Task { finish(await Result(catching: body)) }
    }
    guard let result else {
        throw DeadlineExceeded(description: "\(what): not within \(timeout)")
    }
    return try result.get()
}

extension Result where Failure == any Error {
    package init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
