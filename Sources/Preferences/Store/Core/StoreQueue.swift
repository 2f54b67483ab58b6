import Dispatch

/// The order in which a store's storage work runs: one piece at a time, in
/// the order it was asked for.
///
/// Work runs on one serial dispatch queue per store, which targets the queue
/// all stores share (``SharedWork``) — except that a quick piece asked for
/// while nothing is queued or running may run on the caller's thread with
/// the queue held suspended (``runInline(_:)``), which saves two thread
/// hops and keeps the order just the same: whatever is submitted meanwhile
/// runs after it.
final class StoreQueue: Sendable {
    private let queue = DispatchQueue(label: "preferences.store", target: SharedWork.queue)
    /// Work submitted and not finished yet, plus one while work runs on a
    /// caller's thread. A pthread mutex ThreadSanitizer models (see `Locked`).
    private let outstanding = Locked(0)

    /// Work submitted and not finished yet (for tests that need the store
    /// busy at a known moment).
    var outstandingCount: Int { outstanding.withLock { $0 } }

    /// Runs `work` after everything submitted before it.
    func submit(_ work: @escaping @Sendable () -> Void) {
        outstanding.withLock { $0 += 1 }
        queue.async {
            work()
            self.outstanding.withLock { $0 -= 1 }
        }
    }

    /// Runs `work` after `delay` (seconds). It counts as outstanding from
    /// now, so no work runs on a caller's thread meanwhile.
    func submit(after delay: Double, _ work: @escaping @Sendable () -> Void) {
        outstanding.withLock { $0 += 1 }
        queue.asyncAfter(deadline: .now() + delay) {
            work()
            self.outstanding.withLock { $0 -= 1 }
        }
    }

    /// Runs `work` after everything submitted before it and returns its
    /// result; the calling task waits without holding a thread.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs `work` after everything submitted before it; for work that
    /// cannot fail.
    func run(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            submit {
                work()
                continuation.resume()
            }
        }
    }

    /// Runs `work` on the caller's thread when nothing is queued or
    /// running, holding the queue suspended meanwhile, so whatever is
    /// submitted during it runs after it, as if `work` had been queued
    /// first. nil, running nothing, when the queue is busy.
    func runInline<T>(_ work: () throws -> T) -> Result<T, any Error>? {
        let idle = outstanding.withLock { count in
            guard count == 0 else { return false }
            count = 1
            // Suspended under the lock: nothing submitted from now on can
            // start before `work` ends.
            queue.suspend()
            return true
        }
        guard idle else { return nil }
        defer {
            outstanding.withLock { $0 -= 1 }
            queue.resume()
        }
        return Result { try work() }
    }
}
