/// A watch's handler that never runs once the watch is cancelled: the one
/// rule behind "no event after cancel" for every ``StorageWatch`` the
/// package makes (the file watch and the etcd watch,
/// <doc:ObservingChanges>).
///
/// Each call runs under a recursive lock that ``cancel()`` takes to mark
/// the handler cancelled. So once `cancel()` has returned, no call is under
/// way and none starts. Recursive, so that the handler may cancel the
/// watch that calls it.
package final class CancellableHandler<Event>: Sendable {
    private let handler: @Sendable (Event) -> Void
    /// Held while the handler runs, and by ``cancel()``.
    private let delivering = RecursiveLock()
    private let cancelled = Locked(false)

    package init(_ handler: @escaping @Sendable (Event) -> Void) {
        self.handler = handler
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { cancelled.value }

    /// Marks the handler cancelled, waiting for a call under way (on
    /// another thread) to end. Returns true the first time only.
    @discardableResult
    package func cancel() -> Bool {
        delivering.withLock {
            cancelled.withLock { cancelled in
                defer { cancelled = true }
                return !cancelled
            }
        }
    }

    /// Calls the handler with `event` unless cancelled.
    package func deliver(_ event: Event) {
        delivering.withLock {
            if !isCancelled { handler(event) }
        }
    }
}

extension CancellableHandler where Event == Void {
    /// Calls the handler unless cancelled.
    package func deliver() { deliver(()) }
}
