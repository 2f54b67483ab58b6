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

/// Runs `body`, cancelling it and throwing ``DeadlineExceeded`` with the
/// step `progress` names when it has not finished within `deadline`.
/// Cancelling ends the change feeds and watches the body waits on, so a
/// body that waits for a value that never comes ends.
func withDeadline<T: Sendable>(
    _ deadline: Duration, progress: Progress = Progress(),
    _ body: @escaping @Sendable (Progress) async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body(progress) }
        group.addTask {
            try await Task.sleep(for: deadline)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw DeadlineExceeded(waitingFor: progress.current, deadline: deadline)
        }
        return value
    }
}
