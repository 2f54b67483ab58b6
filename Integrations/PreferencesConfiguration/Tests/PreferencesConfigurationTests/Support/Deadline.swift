import Foundation
import Synchronization

/// A wait that ran past its deadline, naming what it waited for.
struct DeadlineExceeded: Error, CustomStringConvertible {
    var waitingFor: String
    var deadline: Duration
    var description: String { "waited \(deadline) for \(waitingFor)" }
}

/// What a test is waiting for now, so a deadline names it.
final class Progress: Sendable {
    private let step = Mutex("starting")

    /// Names the step the test waits on from now on.
    func waiting(for step: String) { self.step.withLock { $0 = step } }

    var current: String { step.withLock { $0 } }
}

// The main package's deadline race (`outcome(within:_:)`) is `package` API, which another
// package cannot import; this one also cancels the body, which its waits rely on.

/// Runs `body`, cancelling it and throwing ``DeadlineExceeded`` with the
/// step `progress` names when it has not finished within `deadline`
/// (scaled by ``testTimeScale``).
/// Cancelling ends the change feeds and watches the body waits on, so a
/// body that waits for a value that never comes ends.
func withDeadline<T: Sendable>(
    _ deadline: Duration, progress: Progress = Progress(),
    _ body: @escaping @Sendable (Progress) async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body(progress) }
        group.addTask {
            try await Task.sleep(for: scaled(deadline))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw DeadlineExceeded(waitingFor: progress.current, deadline: scaled(deadline))
        }
        return value
    }
}

/// `PREFS_TEST_TIME_SCALE` (1 when unset): every deadline is multiplied
/// by it, for slow machines and sanitizers.
let testTimeScale: Double = {
    guard let text = ProcessInfo.processInfo.environment["PREFS_TEST_TIME_SCALE"],
        let scale = Double(text), scale > 0
    else { return 1 }
    return scale
}()

/// `duration` scaled by ``testTimeScale``.
func scaled(_ duration: Duration) -> Duration { duration * testTimeScale }

/// Checks `condition` every millisecond until it holds; throws
/// ``DeadlineExceeded`` naming `what` when it has not within `deadline`
/// (scaled). For state read synchronously, with no event to await.
nonisolated(nonsending) func eventually(
    _ what: String, within deadline: Duration = .seconds(10), _ condition: () throws -> Bool
) async throws {
    let limit = ContinuousClock.now + scaled(deadline)
    while ContinuousClock.now < limit {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(1))
    }
    if try condition() { return }
    throw DeadlineExceeded(waitingFor: what, deadline: scaled(deadline))
}
