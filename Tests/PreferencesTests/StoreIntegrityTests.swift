import Dispatch
import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Synchronization
import Testing

@testable import Preferences

/// Waits until `condition` holds, polling (for states no event announces,
/// such as "this edit is queued"); fails naming `what` after `timeout`.
private func waitUntil(
    _ what: String, timeout: Duration = .seconds(120), _ condition: () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        guard clock.now < deadline else {
            Issue.record("timed out after \(timeout) waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Holds the store's queue with an edit whose transform blocks (on the
/// store's dispatch queue, never on Swift's cooperative pool) until
/// ``release()``, so edits submitted meanwhile are applied as one group.
private final class QueueBlocker: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    private final class Flag: Sendable { let raised = Atomic<Bool>(false) }
    private let timedOut = Flag()
    let edit: Task<Void, any Error>

    init(_ store: PreferencesStore) async {
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let gate = self.gate
        let timedOut = self.timedOut
        edit = Task {
            try await store.edit { _ in
                startedContinuation.yield()
                // Longer than any wait in the tests that use it, so a slow
                // machine never lets the queue go before they release it.
                if gate.wait(timeout: .now() + TestTime.scaled(seconds: 300)) == .timedOut {
                    timedOut.raised.store(true, ordering: .relaxed)
                }
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
    }

    /// Lets the queue go without checking, for a test that failed before
    /// ``release()``.
    func letGo() { gate.signal() }

    /// Lets the blocking edit finish; it must not have given up waiting.
    func release() async throws {
        gate.signal()
        try await edit.value
        let gaveUp = timedOut.raised.load(ordering: .relaxed)
        #expect(!gaveUp, "the blocking edit was never released")
    }
}

/// S4: a transform that throws is undone exactly, whatever it called.
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreRollbackTests {
    struct Oops: Error {}

    @Test func aFailedTransformThatClearedEverythingLeavesNoTraceInItsGroup() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        let blocker = await QueueBlocker(store)
        defer { blocker.letGo() }
        let seenByB = Locked<PreferenceValue??>(nil)
        let editA = Task {
            try await store.edit { prefs in
                prefs[raw: "x"] = 5
                prefs.removeAll()
                throw Oops()
            }
        }
        try await waitUntil("edit A is queued") { store.pendingEditCount == 1 }
        let editB = Task {
            try await store.edit { prefs in
                seenByB.withLock { $0 = .some(prefs[raw: "x"]) }
                prefs[raw: "y"] = 1
            }
        }
        try await waitUntil("edit B is queued") { store.pendingEditCount == 2 }
        try await blocker.release()

        await #expect(throws: Oops.self) { try await editA.value }
        try await editB.value
        #expect(seenByB.withLock { $0 } == .some(nil), "B saw A's rolled-back x")
        #expect(store.snapshot.values == ["language": "fr", "y": 1])
        #expect(try storedValues(url) == ["language": "fr", "y": 1])
    }

    @Test func rollingBackRestoresValuesVersionAndReportsWhateverTheTransformCalled() throws {
        let start = PreferencesSnapshot(
            values: ["a": 1, "b": "two", "c": [3]], version: 4, registeredDefaults: [:])
        var working = MutablePreferences(snapshot: start, limits: PreferencesLimits())
        working.report("kept from an earlier transform")
        let reportsBefore = working.reports
        let sequences: [(String, (inout MutablePreferences) -> Void)] = [
            (
                "set, removeAll",
                { prefs in
                    prefs[raw: "a"] = 9
                    prefs.removeAll()
                }
            ),
            (
                "removeAll, set",
                { prefs in
                    prefs.removeAll()
                    prefs[raw: "z"] = 1
                }
            ),
            (
                "set, removeAll, set, remove",
                { prefs in
                    prefs[raw: "b"] = "changed"
                    prefs.removeAll()
                    prefs[raw: "a"] = 2
                    prefs.remove("a")
                }
            ),
            (
                "remove, values replaced twice",
                { prefs in
                    prefs[raw: "c"] = nil
                    prefs.values = ["q": 1]
                    prefs.values = [:]
                }
            ),
            (
                "version and report",
                { prefs in
                    prefs.version = 9
                    prefs.report("rolled back")
                    prefs[raw: "n"] = 1
                }
            ),
            (
                "bad key after a change",
                { prefs in
                    prefs[raw: "a"] = 7
                    prefs[raw: ""] = 1
                }
            ),
        ]
        for (name, transform) in sequences {
            working.beginTransform()
            transform(&working)
            working.rollBackTransform()
            #expect(working.values == start.values, "\(name)")
            #expect(working.version == 4, "\(name)")
            #expect(working.reports == reportsBefore, "\(name)")
            #expect(working.failure == nil, "\(name)")
        }
    }
}

/// S17: a write never runs the corruption policy; it retries the re-read
/// briefly and then fails, leaving the bad file as it is.
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreWriteTimeCorruptionTests {
    static let good = storeFile(#"{"counter" : 1, "language" : "fr"}"#)
    /// An editor half-way through saving in place.
    static let halfSaved = "{\n  \"format\" : 1,\n  \"values\" : {\n    \"coun"

    enum Policy: String, CaseIterable, CustomTestStringConvertible {
        case fail, backupAndReset, replace
        var testDescription: String { rawValue }
        var policy: CorruptionPolicy {
            switch self {
            case .fail: .fail
            case .backupAndReset: .backupAndReset
            case .replace: .replace { _ in ["language": "replaced"] }
            }
        }
    }

    @Test(arguments: Policy.allCases)
    func aFileThatTurnsCorruptAfterOpenFailsTheWriteAndIsLeftAlone(policy: Policy) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write(Self.good, to: url)
        let store = try await PreferencesStore(fileURL: url, corruption: policy.policy)
        #expect(store[.counter] == 1)
        try write(Self.halfSaved, to: url)

        await #expect {
            try await store.set(.darkMode, true)
        } throws: { error in
            guard case PreferencesError.corrupted(let file, _) = error else { return false }
            return file == url.path
        }
        #expect(contents(url) == Self.halfSaved)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.contains(".corrupt-") }, "\(names)")
        #expect(store[.counter] == 1)
        #expect(store[.language] == "fr")
        #expect(store[.darkMode] == false)
        #expect(!store.problems.isEmpty)

        // Once the editor has finished, writes work again and keep everything.
        try replaceAtomically(url, with: storeFile(#"{"counter" : 2, "language" : "fr"}"#))
        try await store.set(.darkMode, true)
        #expect(store[.counter] == 2)
        #expect(store[.language] == "fr")
        #expect(store.problems.isEmpty)
        let inFile = try fileSnapshot(url)
        #expect(inFile[.darkMode] == true && inFile[.counter] == 2 && inFile[.language] == "fr")
    }

    @Test func aFileRepairedWhileTheWriteRetriesIsWrittenWithEverythingKept() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write(Self.good, to: url)
        let repaired = storeFile(#"{"counter" : 3, "language" : "fr", "map_zoom" : 9}"#)
        let corruptReads = Atomic<Int>(0)
        // The editor finishes its save right after the write's first re-read
        // has seen the half-saved file.
        let storage = HookedStorage(
            FileStorage(fileURL: url),
            afterRead: { contents in
                guard contents.bytes == Array(Self.halfSaved.utf8) else { return }
                if corruptReads.add(1, ordering: .relaxed).newValue == 1 {
                    try? replaceAtomically(url, with: repaired)
                }
            })
        let store = try await PreferencesStore(storage: storage, corruption: .backupAndReset)
        try write(Self.halfSaved, to: url)

        try await store.set(.darkMode, true)
        let corruptReadCount = corruptReads.load(ordering: .relaxed)
        #expect(corruptReadCount == 1)
        #expect(store[.darkMode] == true)
        #expect(store[.counter] == 3)
        #expect(store[.language] == "fr")
        #expect(store[.mapZoom] == 9)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.contains(".corrupt-") }, "\(names)")
        let reopened = try await PreferencesStore(fileURL: url)
        #expect(
            reopened.snapshot.values == [
                "counter": 3, "language": "fr", "map_zoom": 9, "dark_mode": true,
            ])
    }
}

/// The in-memory backend shares one state between stores and tells its
/// watchers about every write.
@Suite(.scaledTimeLimit(minutes: 10)) struct InMemoryStorageSharingTests {
    @Test func twoStoresOnOneBackendShareOneState() async throws {
        let storage = InMemoryStorage()
        let first = try await PreferencesStore(storage: storage)
        let second = try await PreferencesStore(storage: storage)
        let feed = FeedRecorder(second.changes(.language))
        #expect(await feed.next("en", timeout: .seconds(5)) == "en")

        try await first.set(.language, "fr")
        #expect(second[.language] == "fr")
        #expect(await feed.next("fr", timeout: .seconds(5)) == "fr")
        try await second.edit { $0[.counter] += 1 }
        try await first.edit { $0[.counter] += 1 }
        #expect(first[.counter] == 2)
        #expect(second[.counter] == 2)
        await feed.cancel()
    }

    @Test func watchersHearEveryWriteIncludingDirectOnes() async throws {
        let storage = InMemoryStorage()
        let calls = Atomic<Int>(0)
        let watch = try #require(try storage.watch { _ in calls.add(1, ordering: .relaxed) })
        let store = try await PreferencesStore(storage: storage)
        let feed = FeedRecorder(store.changes(.counter))

        try await store.set(.counter, 1)
        #expect(callCount(calls) == 1)
        try await store.set(.counter, 2)
        #expect(callCount(calls) == 2)

        // A write made on the backend itself reaches the watcher and the store.
        let revision = try storage.currentRevision()
        let written = try storage.write(
            Array(storeFile(#"{"counter" : 7}"#).utf8), ifRevision: revision)
        #expect(written != nil)
        #expect(callCount(calls) == 3)
        #expect(await feed.next(7, timeout: .seconds(5)) == 7)
        #expect(store[.counter] == 7)

        watch.cancel()
        try await store.set(.counter, 8)
        #expect(callCount(calls) == 3)
        await feed.cancel()
    }
}

private func callCount(_ calls: borrowing Atomic<Int>) -> Int { calls.load(ordering: .relaxed) }

/// Change feeds compare what readers see, and republishing compares states
/// without making readers wait.
@Suite(.scaledTimeLimit(minutes: 10)) struct ChangeFeedDistinctValueTests {
    static let zoom = PreferenceKey<Double>("zoom", default: 1)

    @Test func anIntegerAndTheEqualDoubleAreOneValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let feed = FeedRecorder(store.changes(Self.zoom))
        #expect(await feed.next(1) == 1)
        try await store.edit { $0[raw: "zoom"] = .int(14) }
        #expect(await feed.next(14) == 14)
        try await store.set(Self.zoom, 14.0)
        #expect(store.snapshot.values["zoom"] == .double(14))
        try await store.set(Self.zoom, 15)
        #expect(await feed.next(15) == 15)
        #expect(feed.values == [1, 14, 15])
        await feed.cancel()
    }

    @Test func aCodableValueStoredDifferentlyOrRemovedToAnEqualDefaultIsNotNew() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let feed = FeedRecorder(store.changes(.window))
        let initial = Window(width: 800, height: 600)
        #expect(await feed.next(initial) == initial)
        try await store.edit { $0[raw: "window"] = ["width": 1024, "height": 768] }
        let large = Window(width: 1024, height: 768)
        #expect(await feed.next(large) == large)
        // The same window with an explicit null title, then with the
        // numbers as doubles: both decode as the window already delivered.
        try await store.edit { $0[raw: "window"] = ["width": 1024, "height": 768, "title": .null] }
        try await store.edit { $0[raw: "window"] = ["width": 1024.0, "height": 768.0] }
        // Storing the default, then removing it: the value read stays the default.
        try await store.set(.window, initial)
        #expect(await feed.next(initial) == initial)
        try await store.remove(.window)
        let titled = Window(width: 1, height: 1, title: "t")
        try await store.set(.window, titled)
        #expect(await feed.next(titled) == titled)
        #expect(feed.values == [initial, large, initial, titled])
        await feed.cancel()
    }

    @Test func anUnchangedExternalRewriteDeliversNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        let feed = FeedRecorder(store.changes())
        #expect(await feed.next(where: { $0[.language] == "fr" }) != nil)
        let generation = store.core.state.withLock { $0.current.generation }

        // Same values, different bytes (another tool's formatting).
        try replaceAtomically(url, with: #"{"values": {"language": "fr"}, "format": 1}"#)
        try await store.reload()
        #expect(store.core.state.withLock { $0.current.generation } == generation)
        #expect(
            store.core.state.withLock { $0.current.revision }
                == (try store.storage.currentRevision()))

        try replaceAtomically(url, with: #"{"values": {"language": "de"}, "format": 1}"#)
        try await store.reload()
        #expect(await feed.next(where: { $0[.language] == "de" }) != nil)
        #expect(feed.values.map { $0[.language] } == ["fr", "de"])
        await feed.cancel()
    }
}
