import Dispatch
import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Edits queued while a write is in flight share the next write (S4). These
/// tests hold the store's queue with an edit that waits, queue the edits
/// under test one after another behind it, then let go, so the edits are
/// applied together, in that order, in one write.
@Suite(.scaledTimeLimit(minutes: 10)) struct GroupCommitTests {
    struct Refused: Error {}

    /// In one batch: each caller gets its own result, of its own type; an
    /// edit that throws after changing, adding and removing keys is undone
    /// alone, so the edits after it see the state without it; and an edit
    /// that throws after the log of an earlier one was reused is undone to
    /// that earlier edit's state, not further back.
    @Test func aBatchUndoesOnlyTheEditsThatThrowAndHandsEachCallerItsResult() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = CountingStorage(FileStorage(fileURL: url))
        let store = try await PreferencesStore(storage: storage)
        try await store.edit { prefs in
            prefs[raw: "kept"] = "old"
            prefs[.counter] = 0
        }
        let writesBefore = storage.writes.load(ordering: .relaxed)

        let release = DispatchSemaphore(value: 0)
        let (started, running) = AsyncStream<Void>.makeStream()
        // Holds the store's queue (a dispatch thread) until released; it
        // changes nothing, so it writes nothing.
        let holder = Task {
            try await store.edit { _ in
                running.yield(); release.wait()
            }
        }
        for await _ in started { break }

        var queued = 0
        /// Starts `edit` and returns once it waits in the queue, so the
        /// edits are queued, and applied, in the order of these calls.
        func queue<Value: Sendable>(
            _ edit: @escaping @Sendable (inout MutablePreferences) throws -> Value
        ) async -> Task<Value, any Error> {
            let task = Task { try await store.edit(edit) }
            queued += 1
            let count = queued
            let waiting = await eventually { store.pendingEditCount == count }
            #expect(waiting, "edit \(count) never reached the queue")
            return task
        }

        let first = await queue { prefs -> Int in
            prefs[.counter] += 1
            prefs[raw: "a"] = 1
            return prefs[.counter]
        }
        let throwing = await queue { prefs -> Int in
            prefs[raw: "b"] = 2
            prefs[raw: "kept"] = "changed"
            prefs.remove("a")
            prefs[.counter] += 10
            throw Refused()
        }
        let third = await queue { prefs -> [String] in
            prefs[.counter] += 100
            return [prefs[raw: "kept"]?.jsonText ?? "none", prefs[raw: "a"]?.jsonText ?? "none"]
        }
        let throwingLast = await queue { prefs in
            prefs[.counter] = 999
            prefs[raw: "a"] = nil
            prefs[raw: "c"] = 3
            throw Refused()
        }
        release.signal()
        try await holder.value

        #expect(try await first.value == 1)
        await #expect(throws: Refused.self) { try await throwing.value }
        #expect(try await third.value == ["\"old\"", "1"])
        await #expect(throws: Refused.self) { try await throwingLast.value }

        let expected: [String: PreferenceValue] = ["kept": "old", "counter": 101, "a": 1]
        #expect(store.snapshot.values == expected)
        #expect(try storedValues(url) == expected)
        #expect(
            storage.writes.load(ordering: .relaxed) == writesBefore + 1,
            "the four edits should share one write")
    }

    /// A batch whose only edits throw writes nothing, and each caller gets
    /// its own error.
    @Test func aBatchOfThrowingEditsWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = CountingStorage(FileStorage(fileURL: url))
        let store = try await PreferencesStore(storage: storage)
        try await store.set(.counter, 7)
        let before = try Data(contentsOf: url)
        let writesBefore = storage.writes.load(ordering: .relaxed)

        let release = DispatchSemaphore(value: 0)
        let (started, running) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await store.edit { _ in
                running.yield(); release.wait()
            }
        }
        for await _ in started { break }
        struct Numbered: Error { let number: Int }
        var tasks: [Task<Void, any Error>] = []
        for number in 0..<5 {
            tasks.append(
                Task {
                    try await store.edit { prefs in
                        prefs[.counter] = number
                        throw Numbered(number: number)
                    }
                })
            let waiting = await eventually { store.pendingEditCount == number + 1 }
            #expect(waiting, "edit \(number) never reached the queue")
        }
        release.signal()
        try await holder.value
        for (number, task) in tasks.enumerated() {
            await #expect {
                try await task.value
            } throws: { error in
                (error as? Numbered)?.number == number
            }
        }
        #expect(store[.counter] == 7)
        #expect(try Data(contentsOf: url) == before)
        #expect(storage.writes.load(ordering: .relaxed) == writesBefore)
    }

    /// A batch whose document would be too large for the file's limit
    /// falls back to one write per edit: only the edit that makes it too
    /// large fails, each caller gets its own outcome once, and the others'
    /// values are on disk.
    @Test func aBatchTooLargeForOneWriteFailsOnlyTheEditThatMadeItSo() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var limits = PreferencesLimits()
        limits.maxFileSize = 2048
        let store = try await PreferencesStore(storage: FileStorage(fileURL: url), limits: limits)
        try await store.set(.counter, 1)

        let release = DispatchSemaphore(value: 0)
        let (started, running) = AsyncStream<Void>.makeStream()
        // The fallback applies every edit of the batch again, this one
        // too: it holds the queue only the first time.
        let held = Locked(false)
        let holder = Task {
            try await store.edit { _ in
                guard !held.withLock({ $0 }) else { return }
                held.withLock { $0 = true }
                running.yield(); release.wait()
            }
        }
        for await _ in started { break }
        let values: [(String, PreferenceValue)] = [
            ("a", "first"), ("huge", .string(String(repeating: "x", count: 4096))), ("b", "third"),
        ]
        var tasks: [Task<String, any Error>] = []
        for (number, (key, value)) in values.enumerated() {
            tasks.append(
                Task {
                    try await store.edit { prefs in
                        prefs[raw: key] = value
                        return key
                    }
                })
            let waiting = await eventually { store.pendingEditCount == number + 1 }
            #expect(waiting, "the edit of \(key) never reached the queue")
        }
        release.signal()
        try await holder.value

        #expect(try await tasks[0].value == "a")
        await #expect {
            try await tasks[1].value
        } throws: { error in
            guard case PreferencesError.limitExceeded = error else { return false }
            return true
        }
        #expect(try await tasks[2].value == "b")
        let onDisk = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        let stored = onDisk?["values"] as? [String: Any]
        #expect(stored?["a"] as? String == "first")
        #expect(stored?["b"] as? String == "third")
        #expect(stored?["huge"] == nil)
        #expect(stored?["counter"] as? Int == 1)
    }
}

/// A write takes in the edits queued while it is being prepared, as long as
/// it has not touched the file — but a steady stream of them holds it back
/// only so long.
@Suite(.scaledTimeLimit(minutes: 10)) struct LateEditTests {
    /// Edits queued while a batch's transforms run go out in the same
    /// write as the batch, not in a write of their own after it.
    @Test func editsQueuedWhileABatchIsAppliedShareItsWrite() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = CountingStorage(FileStorage(fileURL: url))
        let store = try await PreferencesStore(storage: storage)
        try await store.set(.counter, 1)
        let writesBefore = storage.writes.load(ordering: .relaxed)

        let release = DispatchSemaphore(value: 0)
        let (started, running) = AsyncStream<Void>.makeStream()
        // Changes a key, then holds the store's queue (a dispatch thread)
        // until the edits below wait in the queue.
        let first = Task {
            try await store.edit { prefs -> Int in
                prefs[.counter] += 10
                running.yield()
                release.wait()
                return prefs[.counter]
            }
        }
        for await _ in started { break }
        var later: [Task<Int, any Error>] = []
        for number in 1...3 {
            later.append(
                Task {
                    try await store.edit { prefs -> Int in
                        prefs[raw: "late\(number)"] = .int(Int64(number))
                        prefs[.counter] += 1
                        return prefs[.counter]
                    }
                })
            let waiting = await eventually { store.pendingEditCount == number }
            #expect(waiting, "edit \(number) never reached the queue")
        }
        release.signal()

        #expect(try await first.value == 11)
        var results: [Int] = []
        for task in later { results.append(try await task.value) }
        #expect(results == [12, 13, 14])
        #expect(
            storage.writes.load(ordering: .relaxed) == writesBefore + 1,
            "the edits queued while the first was applied should share its write")
        let onDisk = try storedValues(url)
        #expect(onDisk["counter"] == 14)
        #expect(onDisk["late3"] == 3)
    }

    /// Each edit of a chain queues the next while it is applied — a steady
    /// stream: the first write takes in edits for a bounded number of
    /// rounds (some while the batch is applied, some while its document is
    /// encoded, which is then encoded again), then goes out; the rest follow
    /// in the next write. Every edit lands, in order, with its own result.
    ///
    /// The chain's edits belong to tasks already waiting, and each
    /// transform queues the next one itself, so no task has to start while
    /// the store's thread is busy: the chain does not depend on how busy
    /// the machine's threads are.
    @Test func aStreamOfEditsHoldsAWriteBackOnlySoLong() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = CountingStorage(FileStorage(fileURL: url), keepingWrites: true)
        let store = try await PreferencesStore(storage: storage)
        // Applied while the first write is prepared: the first edit, then
        // `maxLateTakes` takes of one edit each, and that again after each
        // of the `maxReencodes` encodings that found a new edit.
        typealias Machine = GroupCommitMachine<StoreCore.PendingEdit>
        let perWrite = (Machine.maxLateTakes + 1) * (Machine.maxReencodes + 1)
        let chain = EditChain(core: store.core, length: perWrite + 5)
        var waiting: [Task<any Sendable, any Error>] = []
        for number in 1...chain.length {
            waiting.append(
                Task {
                    try await withUnsafeThrowingContinuation { continuation in
                        chain.register(number, continuation)
                    }
                })
        }
        let registered = await eventually { chain.registeredCount == chain.length }
        try #require(registered, "only \(chain.registeredCount) of the chain's tasks started")
        store.core.enqueue(chain.edit(1))

        var results: [Int] = []
        for task in waiting { results.append(try #require(try await task.value as? Int)) }
        #expect(results == Array(1...chain.length))
        let written = storage.written.withLock { $0 }
        #expect(written.count == 2)
        let counts = try written.map { try storedValues($0, file: url.path).count }
        #expect(counts == [perWrite, chain.length])
    }
}

/// A chain of edits, each queued by the transform of the one before, for
/// tasks that already wait for their results.
final class EditChain: Sendable {
    let core: StoreCore
    let length: Int
    private let continuations = Locked<[Int: UnsafeContinuation<any Sendable, any Error>]>([:])

    init(core: StoreCore, length: Int) {
        self.core = core
        self.length = length
    }

    var registeredCount: Int { continuations.withLock { $0.count } }

    func register(_ number: Int, _ continuation: UnsafeContinuation<any Sendable, any Error>) {
        continuations.withLock { $0[number] = continuation }
    }

    /// Edit `number`: stores `k<number>`, queues the next edit, returns `number`.
    func edit(_ number: Int) -> StoreCore.PendingEdit {
        let continuation = continuations.withLock { $0[number]! }
        return StoreCore.PendingEdit(
            id: UInt64.max - UInt64(number),
            transform: { prefs in
                prefs[raw: "k\(number)"] = .int(Int64(number))
                if number < self.length { self.core.enqueue(self.edit(number + 1)) }
                return number
            },
            continuation: continuation)
    }
}

extension PreferencesStore {
    /// Edits waiting for a write (for forming groups in tests).
    var pendingEditCount: Int { core.state.withLock { $0.edits.pending.count } }
}
