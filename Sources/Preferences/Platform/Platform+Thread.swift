import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts `body` on a new thread of its own, which ends when `body` returns.
///
/// For work that blocks for long (an etcd watch stream's reads, a test's
/// call into a backend): never a thread of Swift's cooperative pool or of
/// Dispatch's, which a few such calls would use up.
package func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let start = Unmanaged.passRetained(Start(body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    #if canImport(Darwin)
        var thread: pthread_t?
        let status = pthread_create(
            &thread, &attributes,
            { start in
                Unmanaged<Start>.fromOpaque(start).takeRetainedValue().body()
                return nil
            }, start)
    #else
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { start in
                Unmanaged<Start>.fromOpaque(start!).takeRetainedValue().body()
                return nil
            }, start)
    #endif
    precondition(status == 0, "pthread_create failed: \(String(cString: strerror(status)))")
}

/// Blocks the calling thread for `seconds`: for waits on a store's own
/// queue or a thread of its own, never on Swift's cooperative pool.
package func sleepThread(seconds: Double) {
    let nanoseconds = Int(max(0, seconds) * 1_000_000_000)
    var request = timespec(
        tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

extension DispatchQueue {
    /// A suspended timer that runs `handler` on this queue every `interval`,
    /// first one interval from now; its owner resumes and cancels it.
    ///
    /// Work that repeats goes through this; work done once later is
    /// `asyncAfter` (a deadline already passed runs at once) or, in async
    /// code, `Task.sleep`, and checks when it runs whether it is still wanted.
    package func repeatingTimer(
        every interval: DispatchTimeInterval, _ handler: @escaping @Sendable () -> Void
    ) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: self)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler(handler: handler)
        return timer
    }
}
