import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// `close()`: a graceful end. It ends the handle's feeds, waits for the
/// writes it started, removes the process's registration at once, and
/// refuses later calls; other handles stay open.
@Suite(.scaledTimeLimit(minutes: 5))
struct StoreClosingTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    /// The feed's first element, or nil when it ended first, within the deadline.
    func nextOrEnd<Element: Sendable>(_ stream: AsyncStream<Element>, _ what: String)
        async throws -> Element?
    {
        try await withDeadline(what, timeout: .seconds(20)) {
            for await element in stream { return element }
            return nil
        }
    }

    @Test func closingEndsEveryFeedOfTheHandle() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        let values = store.changes(.counter)
        let snapshots = store.changes()
        let history = store.changes(since: 0)
        let problems = store.problemChanges()
        await store.close()
        // Each feed ends once it has handed out what it held.
        for (name, ended) in [
            ("values", try await drained(values)), ("snapshots", try await drained(snapshots)),
            ("problems", try await drained(problems)), ("history", try await drained(history)),
        ] {
            #expect(ended, "the \(name) feed did not end")
        }
        // A feed asked for afterwards ends at once.
        #expect(try await nextOrEnd(store.changes(.counter), "a feed made after closing") == nil)
    }

    /// Whether `stream` ends within the deadline, whatever it hands out first.
    func drained<Element: Sendable>(_ stream: AsyncStream<Element>) async throws -> Bool {
        try await withDeadline("the feed's end", timeout: .seconds(20)) {
            for await _ in stream {}
            return true
        }
    }

    @Test func aClosedHandleRefusesCallsAndKeepsItsLastState() async throws {
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 7)
        await store.close()
        await store.close()  // again: nothing more happens
        await #expect(throws: PreferencesError.closed(location: url.path)) {
            try await store.set(.counter, 8)
        }
        await #expect(throws: PreferencesError.closed(location: url.path)) {
            try await store.edit { $0[.language] = "fr" }
        }
        await #expect(throws: PreferencesError.closed(location: url.path)) {
            try await store.history()
        }
        await #expect(throws: PreferencesError.closed(location: url.path)) {
            try await store.reload()
        }
        #expect(store[.counter] == 7)
        #expect(try fileSnapshot(url).values == ["counter": 7])
        #expect(
            PreferencesError.closed(location: url.path).description
                == "the store at \(url.path) was closed: open it again to use it")

        // Another handle on the same file is open, and so is a new one.
        let reopened = try await PreferencesStore(fileURL: url)
        try await reopened.set(.counter, 9)
        #expect(try fileSnapshot(url).values == ["counter": 9])
    }

    @Test func closingWaitsForTheWritesItsHandleStarted() async throws {
        let store = try await PreferencesStore(fileURL: url)
        let order = Locked<[String]>([])
        let (started, running) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let write = Task {
            try await store.edit { prefs in
                running.yield()
                release.wait()
                prefs[.counter] = 42
                order.withLock { $0.append("write") }
            }
        }
        try await withDeadline("the edit to start") {
            for await _ in started { return }
        }
        let closing = Task {
            await store.close()
            order.withLock { $0.append("closed") }
        }
        release.signal()
        await closing.value
        try await write.value
        #expect(order.withLock { $0 } == ["write", "closed"])
        #expect(try fileSnapshot(url).values == ["counter": 42])
    }

    @Test func closingRemovesTheRegistrationBeforeItReturns() async throws {
        let store = try await PreferencesStore(fileURL: url)
        await store.registeredAsReplica()
        let replicas = try #require(FileStorage(fileURL: url).replicas)
        #expect(try replicas.list().map(\.pid) == [getpid()])
        await store.close()
        #expect(try replicas.list().isEmpty, "still registered after close()")
        let names = try FileManager.default.contentsOfDirectory(
            atPath: directory.path + "/prefs.replicas.d")
        #expect(names.isEmpty, "left in the registrations' directory: \(names)")
    }
}
