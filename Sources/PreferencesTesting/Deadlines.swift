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
    private let state = Locked<(CheckedContinuation<Value, any Error>?, Task<Void, Never>?)>(
        (nil, nil))

    fileprivate func start(_ continuation: CheckedContinuation<Value, any Error>) {
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

    fileprivate func finish(_ result: Result<Value, any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer { state = (nil, nil) }
            return state
        }
        timer?.cancel()
        continuation?.resume(with: result)
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
    let race = Race<Value>()
    let timeout = TestTime.scaled(timeout)
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        startThread { race.finish(Result { try body() }) }
        race.setTimer(
            Task {
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                race.finish(
                    .failure(
                        DeadlineExceeded(
                            description: "\(what): no result within \(timeout)\(detail())")))
            })
    }
}

/// Awaits `body` for at most `timeout` (scaled by ``TestTime/scale``); on time out throws
/// ``DeadlineExceeded`` naming `what` (the body is left to finish on its own).
package func withDeadline<Value: Sendable>(
    _ what: String, timeout: Duration = .seconds(60),
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let race = Race<Value>()
    let timeout = TestTime.scaled(timeout)
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        Task { race.finish(await Result(catching: body)) }
        race.setTimer(
            Task {
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                race.finish(
                    .failure(DeadlineExceeded(description: "\(what): not within \(timeout)")))
            })
    }
}

extension Result where Failure == any Error {
    package init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
