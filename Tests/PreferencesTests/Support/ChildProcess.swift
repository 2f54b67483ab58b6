import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A wait that ran out of time; says what it waited for and what the child printed.
struct DeadlineExceeded: Error, CustomStringConvertible {
    let description: String
}

/// The first of two outcomes wins; the other is dropped.
private final class Race<Value: Sendable>: Sendable {
    // A pthread mutex (`Locked`), which ThreadSanitizer models, not `Mutex`.
    private let state = Locked<(CheckedContinuation<Value, any Error>?, Task<Void, Never>?)>(
        (nil, nil))

    func start(_ continuation: CheckedContinuation<Value, any Error>) {
        state.withLock { $0.0 = continuation }
    }

    func setTimer(_ timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            if state.0 == nil { return true }
            state.1 = timer
            return false
        }
        if finished { timer.cancel() }
    }

    func finish(_ result: Result<Value, any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer { state = (nil, nil) }
            return state
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }
}

/// Runs blocking `body` on a thread of its own (never on Swift's
/// cooperative pool) and awaits its result for at most `timeout`. On time
/// out it throws ``DeadlineExceeded`` naming `what` and `detail()`; the
/// thread is left to finish on its own.
func onOwnThread<Value: Sendable>(
    _ what: String, timeout: Duration = .seconds(120),
    detail: @escaping @Sendable () -> String = { "" },
    _ body: @escaping @Sendable () throws -> Value
) async throws -> Value {
    let race = Race<Value>()
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        Thread { race.finish(Result { try body() }) }.start()
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

/// Awaits `body` for at most `timeout`; on time out throws
/// ``DeadlineExceeded`` naming `what` (the body is left to finish on its own).
func withDeadline<Value: Sendable>(
    _ what: String, timeout: Duration = .seconds(60),
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let race = Race<Value>()
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
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Reads a child's output on a thread of its own and hands it out line by
/// line; every wait has a deadline and fails with everything the child
/// printed so far.
final class ChildOutput: Sendable {
    private struct State {
        var buffer: [UInt8] = []
        var transcript: [UInt8] = []
        var ended = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())
    /// Woken on every chunk, for waits on a thread of their own.
    private let arrived = NSCondition()
    let name: String

    /// Starts reading `handle` until end of file.
    init(_ handle: FileHandle, name: String) {
        self.name = name
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                let waiter = state.withLock { state in
                    if chunk.isEmpty {
                        state.ended = true
                    } else {
                        state.buffer += chunk
                        state.transcript += chunk
                    }
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
                arrived.lock()
                arrived.broadcast()
                arrived.unlock()
                if chunk.isEmpty { return }
            }
        }.start()
    }

    /// Everything the child printed so far.
    var transcript: String {
        String(decoding: state.withLock { $0.transcript }, as: UTF8.self)
    }

    private func takeLine() -> (line: String?, ended: Bool) {
        state.withLock { state in
            if let newline = state.buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: state.buffer[..<newline], as: UTF8.self)
                state.buffer.removeSubrange(...newline)
                return (line, false)
            }
            return (nil, state.ended)
        }
    }

    /// The next line; nil once the output has ended. Throws
    /// ``DeadlineExceeded`` (with the transcript) if no line comes in `timeout`.
    func nextLine(timeout: Duration = .seconds(60)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (line, ended) = takeLine()
            if let line { return line }
            if ended { return nil }
            guard ContinuousClock.now < deadline else {
                throw DeadlineExceeded(
                    description:
                        "\(name): no line within \(timeout); it printed: \"\(transcript)\"")
            }
            await waitForData(until: deadline)
        }
    }

    /// ``nextLine(timeout:)`` for code on a thread of its own (never on the
    /// cooperative pool: from async code it is a compile-time error).
    @available(*, noasync, message: "use nextLine(timeout:)")
    func blockingNextLine(timeout: Duration = .seconds(60)) throws -> String? {
        let limit = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + 0.5)
        arrived.lock()
        defer { arrived.unlock() }
        while true {
            let (line, ended) = takeLine()
            if let line { return line }
            if ended { return nil }
            guard arrived.wait(until: limit) || Date() < limit else {
                throw DeadlineExceeded(
                    description:
                        "\(name): no line within \(timeout); it printed: \"\(transcript)\"")
            }
        }
    }

    /// Returns when more output (or its end) has arrived, or at `deadline`.
    private func waitForData(until deadline: ContinuousClock.Instant) async {
        let timer = Task { [self] in
            try? await Task.sleep(until: deadline)
            wake()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.ended || state.buffer.contains(0x0A) || ContinuousClock.now >= deadline {
                    return true
                }
                state.waiter?.resume()
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        timer.cancel()
    }

    private func wake() {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The next line, which must be `expected`; records an issue with the
    /// transcript otherwise.
    @discardableResult
    func expectLine(
        _ expected: String, timeout: Duration = .seconds(60),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Bool {
        let line = try await nextLine(timeout: timeout)
        #expect(
            line == expected,
            "\(name): expected \"\(expected)\", it printed: \"\(transcript)\"",
            sourceLocation: sourceLocation)
        return line == expected
    }
}

/// Waits for `process` to end, off the cooperative pool, for at most
/// `timeout`; on time out the child is killed and the wait throws.
func waitForExit(
    _ process: Process, _ name: String, timeout: Duration = .seconds(120),
    output: ChildOutput? = nil
) async throws -> Int32 {
    do {
        return try await onOwnThread(
            "\(name) to exit", timeout: timeout,
            detail: { output.map { "; it printed: \"\($0.transcript)\"" } ?? "" }
        ) {
            process.waitUntilExit()
            return process.terminationStatus
        }
    } catch {
        if process.isRunning { sendSignal(SIGKILL, to: process.processIdentifier) }
        throw error
    }
}
