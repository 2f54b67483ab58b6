import Dispatch
import PreferencesTesting
import Testing

@testable import Preferences

/// The one rule for "no event after cancel" that the file and etcd watches
/// share: once `cancel()` has returned, no call of the handler is under way
/// and none starts, and a handler may cancel the watch that calls it.
@Suite struct CancellableHandlerTests {
    @Test func cancelWaitsForACallUnderWayAndRefusesLaterOnes() async throws {
        let calls = Locked<[Int]>([])
        let finished = Locked(false)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let cancelling = DispatchSemaphore(value: 0)
        let handler = CancellableHandler<Int> { value in
            calls.withLock { $0.append(value) }
            guard value == 2 else { return }
            inside.signal()
            release.wait()
            finished.withLock { $0 = true }
        }
        handler.deliver(1)
        startThread { handler.deliver(2) }
        try await onOwnThread("the handler to be called on another thread") { inside.wait() }

        async let cancelled = onOwnThread("cancel() to return once the call ended") {
            cancelling.signal()
            let first = handler.cancel()
            return (first: first, callFinished: finished.value)
        }
        try await onOwnThread("cancel() to be called") { cancelling.wait() }
        release.signal()
        let outcome = try await cancelled
        #expect(outcome.first, "the first cancel() said the handler was already cancelled")
        #expect(outcome.callFinished, "cancel() returned while the handler was still running")

        handler.deliver(3)
        #expect(calls.value == [1, 2], "the handler ran after cancel() returned")
        #expect(!handler.cancel(), "a second cancel() said it was the first")
        #expect(handler.isCancelled)
    }

    @Test func aHandlerMayCancelItself() async throws {
        let calls = Locked(0)
        let own = Locked<CancellableHandler<Void>?>(nil)
        let handler = CancellableHandler<Void> {
            calls.withLock { $0 += 1 }
            own.value?.cancel()
        }
        own.withLock { $0 = handler }
        // A lock that were not recursive would never let this return.
        try await onOwnThread("a handler that cancels itself to return") {
            handler.deliver()
            handler.deliver()
        }
        #expect(calls.value == 1, "the handler ran again after cancelling itself")
        #expect(handler.isCancelled)
        own.withLock { $0 = nil }
    }
}
