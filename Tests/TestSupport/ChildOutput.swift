import Foundation
import Preferences
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileHandle {
    /// The next bytes a pipe holds, waiting for some; empty at end of file.
    /// Unlike `availableData`, which stops the whole test run when a signal
    /// interrupts its read, an interrupted read is tried again.
    package func nextChunk() -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                systemRead(fileDescriptor, $0.baseAddress, $0.count)
            }
            if count > 0 { return Data(buffer[0..<count]) }
            if count < 0 && errno == EINTR { continue }
            return Data()
        }
    }
}

/// `read(2)`, named apart from `FileHandle`'s own `read` methods.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int)
    -> Int
{
    read(descriptor, buffer, count)
}

/// Reads a child's output on a thread of its own and hands it out line by
/// line; every wait has a deadline and fails with everything the child
/// printed so far.
package final class ChildOutput: Sendable {
    private struct State {
        package var transcript: [UInt8] = []
        /// How much of the transcript has been handed out as lines.
        package var taken = 0
        package var ended = false
        package var waiter: (@Sendable () -> Void)?
    }

    private let state = Locked(State())
    /// Woken on every chunk, for waits on a thread of their own.
    private let arrived = NSCondition()
    package let name: String

    /// Starts reading `handle` until end of file, then closes it and calls
    /// `ended`; with no handle, the output has ended already.
    package init(_ handle: FileHandle?, name: String, ended: @escaping @Sendable () -> Void = {}) {
        self.name = name
        guard let handle else {
            state.withLock { $0.ended = true }
            ended()
            return
        }
        Thread { [self] in
            while true {
                let chunk = handle.nextChunk()
                let waiter = state.withLock { state in
                    if chunk.isEmpty {
                        state.ended = true
                    } else {
                        state.transcript += chunk
                    }
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?()
                arrived.lock()
                arrived.broadcast()
                arrived.unlock()
                if chunk.isEmpty { break }
            }
            try? handle.close()
            ended()
        }.start()
    }

    /// Everything the child printed so far.
    package var transcript: String {
        String(decoding: state.withLock { $0.transcript }, as: UTF8.self)
    }

    private func takeLine() -> (line: String?, ended: Bool) {
        state.withLock { state in
            if let newline = state.transcript[state.taken...].firstIndex(of: 0x0A) {
                let line = String(decoding: state.transcript[state.taken..<newline], as: UTF8.self)
                state.taken = newline + 1
                return (line, false)
            }
            return (nil, state.ended)
        }
    }

    /// The next line; nil once the output has ended. Throws
    /// ``DeadlineExceeded`` (with the transcript) if no line comes in
    /// `timeout` (scaled by ``TestTime/scale``).
    package func nextLine(timeout: Duration = .seconds(60)) async throws -> String? {
        let timeout = TestTime.scaled(timeout)
        let deadline = ContinuousClock.now + timeout
        while true {
            let (line, ended) = takeLine()
            if let line { return line }
            if ended { return nil }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw DeadlineExceeded(
                    description:
                        "\(name): no line within \(timeout); it printed: \"\(transcript)\"")
            }
            _ = await outcome(within: left) { finish in whenMoreArrives { finish(.success(())) } }
        }
    }

    /// ``nextLine(timeout:)`` for code on a thread of its own (never on the
    /// cooperative pool: from async code it is a compile-time error).
    @available(*, noasync, message: "use nextLine(timeout:)")
    package func blockingNextLine(timeout: Duration = .seconds(60)) throws -> String? {
        let timeout = TestTime.scaled(timeout)
        let limit = Date(timeIntervalSinceNow: timeout.seconds)
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

    /// Calls `arrived` once a line or the end is there to take: at once,
    /// or with the next output.
    private func whenMoreArrives(_ arrived: @escaping @Sendable () -> Void) {
        let ready = state.withLock { state -> Bool in
            if state.ended || state.transcript[state.taken...].contains(0x0A) { return true }
            state.waiter = arrived
            return false
        }
        if ready { arrived() }
    }

    /// The next line, which must be `expected`; records an issue with the
    /// transcript otherwise.
    @discardableResult
    package func expectLine(
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
