import Foundation
import Preferences
import PreferencesTesting
import Testing

/// Consumes a change feed as fast as it can and lets a test await the next
/// value that satisfies a condition. A value that never comes fails after
/// `timeout` instead of hanging the run (a guard, not a timing assertion).
package final class FeedRecorder<Element: Sendable>: Sendable {
    private struct Waiter {
        package let id: Int
        package let matches: @Sendable (Element) -> Bool
        package let deliver: @Sendable (Element) -> Void
    }

    private struct State {
        package var values: [Element] = []
        package var cursor = 0
        package var waiter: Waiter?
        package var nextID = 0
    }

    private final class Shared: Sendable {
        package let state = Locked(State())
    }

    private let shared = Shared()
    private let task = Locked<Task<Void, Never>?>(nil)

    package init(_ stream: AsyncStream<Element>) {
        let consumer = Task { [shared] in
            for await value in stream {
                let woken = shared.state.withLock { state -> Waiter? in
                    state.values.append(value)
                    guard let waiter = state.waiter, waiter.matches(value) else { return nil }
                    state.waiter = nil
                    state.cursor = state.values.count
                    return waiter
                }
                woken?.deliver(value)
            }
        }
        task.withLock { $0 = consumer }
    }

    deinit { task.withLock { $0?.cancel() } }

    /// Every value received so far.
    package var values: [Element] { shared.state.withLock { $0.values } }

    /// The first value after the last match that satisfies `matches`, or
    /// nil if none arrives within `timeout`.
    package func next(
        where matches: @escaping @Sendable (Element) -> Bool, timeout: Duration = .seconds(20)
    ) async -> Element? {
        let shared = self.shared
        let id = shared.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let result = await outcome(within: TestTime.scaled(timeout)) { finish in
            let found = shared.state.withLock { state -> Element? in
                if let index = state.values[state.cursor...].firstIndex(where: matches) {
                    state.cursor = index + 1
                    return state.values[index]
                }
                state.waiter = Waiter(id: id, matches: matches) { finish(.success($0)) }
                return nil
            }
            if let found { finish(.success(found)) }
        }
        guard case .success(let value)? = result else {
            // The time ran out: a later value is left for the next wait.
            shared.state.withLock { state in
                if state.waiter?.id == id { state.waiter = nil }
            }
            return nil
        }
        return value
    }

    /// Ends the subscription and waits until the consumer has stopped.
    package func cancel() async {
        let consumer = task.withLock { $0 }
        consumer?.cancel()
        await consumer?.value
    }
}

extension FeedRecorder where Element: Equatable {
    /// The next value equal to `expected`, or nil after `timeout`.
    package func next(_ expected: Element, timeout: Duration = .seconds(20)) async -> Element? {
        await next(where: { $0 == expected }, timeout: timeout)
    }
}

/// An iterator moved onto the task that waits for it (a wait with a
/// deadline runs on a task of its own); one wait at a time.
private final class IteratorBox<Element: Sendable>: @unchecked Sendable {
    var iterator: AsyncStream<Element>.Iterator
    init(_ iterator: AsyncStream<Element>.Iterator) { self.iterator = iterator }
    func next() async -> Element? { await iterator.next() }
}

/// A change feed that ended while a test waited for its next value: an
/// outcome of the code under test, unlike a ``DeadlineExceeded``.
package struct FeedEnded: Error, CustomStringConvertible {
    package let description: String
}

extension AsyncStream.Iterator where Element: Sendable {
    /// The feed's next value. When none comes within `timeout` it throws
    /// ``DeadlineExceeded``, and when the feed ends first ``FeedEnded``, each
    /// naming `what` was awaited, so a broken feed fails the test in seconds
    /// instead of hanging the run.
    /// After a time out the iterator is still being read: do not use it again.
    package mutating func next(
        within timeout: Duration = .seconds(20), _ what: String
    ) async throws -> Element {
        let box = IteratorBox(self)
        let value = try await withDeadline("the feed's next value (\(what))", timeout: timeout) {
            await box.next()
        }
        self = box.iterator
        guard let value else {
            throw FeedEnded(description: "the feed ended while waiting for \(what)")
        }
        return value
    }

    /// Runs `write`, then ends the feed and returns the value it had
    /// buffered, if any, without waiting for one: an `AsyncStream` read from
    /// a cancelled task hands out what it buffered, then ends. `write` runs
    /// on that same task, which cancels itself as soon as `write` returns.
    /// A write by this process is in every feed before the write returns
    /// (C2, <doc:ObservingChanges>): on a feed read up to date before, the
    /// value is `write`'s, and nil means `write` yielded nothing. Fails
    /// after `timeout`, naming `what`.
    package func cancelAndTakeBuffered(
        within timeout: Duration = .seconds(20), _ what: String,
        after write: @escaping @Sendable () async throws -> Void
    ) async throws -> Element? {
        let box = IteratorBox(self)
        return try await withDeadline(what, timeout: timeout) {
            try await write()
            withUnsafeCurrentTask { $0?.cancel() }
            return await box.next()
        }
    }
}

/// Replaces a file the way editors and other tools do: write a temporary
/// file beside it, then rename it over the name.
package func replaceAtomically(_ url: URL, with text: String) throws {
    let temporary = url.deletingLastPathComponent().appendingPathComponent(
        ".\(url.lastPathComponent).\(UUID().uuidString).swp")
    try write(text, to: temporary)
    guard rename(temporary.path, url.path) == 0 else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}

/// A store file holding `values` (JSON text of the values object).
package func storeFile(_ values: String) -> String {
    "{\n  \"format\" : 1,\n  \"values\" : \(values)\n}\n"
}

/// Open descriptors of this process that a file store could hold (network
/// sockets, which the etcd tests running beside open by the dozen, are left
/// out), with what each refers to.
package func openDescriptors() -> [Int32: String] {
    allOpenDescriptors().filter { !$0.value.hasPrefix("socket:") }
}

/// Every open descriptor of this process, with what each refers to.
package func allOpenDescriptors() -> [Int32: String] {
    var result: [Int32: String] = [:]
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for name in names {
        guard let number = Int32(name) else { continue }
        result[number] =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))
            ?? "?"
    }
    return result
}
