import Dispatch
import Foundation
import Testing

@testable import Preferences

/// Edits queued while a write is in flight share the next write (S4). These
/// tests hold the store's queue with an edit that waits, queue the edits
/// under test one after another behind it, then let go, so the edits are
/// applied together, in that order, in one write.
@Suite struct GroupCommitTests {
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
        let onDisk = try StoreDocument.decode(
            Array(try Data(contentsOf: url)), file: url.path, limits: PreferencesLimits())
        #expect(onDisk.values == expected)
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
}

extension PreferencesStore {
    /// Edits waiting for a write.
    fileprivate var pendingEditCount: Int { core.state.withLock { $0.pending.count } }
}
