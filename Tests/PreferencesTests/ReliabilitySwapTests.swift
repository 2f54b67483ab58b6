import Foundation
import PreferencesTestSupport
import Synchronization
import Testing

@testable import Preferences

/// The file swapped by another program between the store's read and its
/// write — a program that ignores the lock, like an editor saving with
/// rename. The swap happens inside the transform, which runs after the store
/// has read the file and before it replaces it.
@Suite(.scaledTimeLimit(minutes: 10)) struct ReliabilitySwapTests {
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Another program (`mv`) renames `replacement` over `file`; this one
    /// blocks, for a store's transform (on the store's queue).
    static func swap(_ replacement: URL, over file: URL) {
        let moved = try? ChildCommand(program: "/usr/bin/mv", [replacement.path, file.path])
            .runBlocking()
        #expect(moved?.status == 0)
    }

    /// ``swap(_:over:)`` for a test's own task.
    static func swap(_ replacement: URL, over file: URL) async {
        let status = try? await runTool("/usr/bin/mv", [replacement.path, file.path])
        #expect(status == 0)
    }

    @Test func aValidSwapIsReadAndTheEditRunsAgainOnIt() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.set(.language, "fr")
        let replacement = directory.file("editor-save.json")
        try write(
            "{\n  \"format\" : 1,\n  \"values\" : {\n    \"counter\" : 41,\n    \"language\" : \"de\"\n  }\n}\n",
            to: replacement)
        let calls = Calls()
        try await store.edit { prefs in
            if calls.count.add(1, ordering: .relaxed).newValue == 1 {
                Self.swap(replacement, over: file)
            }
            prefs[.counter] += 1
        }
        // The transform ran again on the swapped-in contents: nothing of the
        // other program's save is lost, and the edit applies on top of it.
        #expect(calls.count.load(ordering: .relaxed) == 2)
        #expect(store[.counter] == 42)
        #expect(store[.language] == "de")
        #expect(try storedInteger("counter", in: file) == 42)
        #expect(contents(file)?.contains("\"language\" : \"de\"") == true)
        Reliability.report(
            "fault the file swapped between read and write (valid file): no error, the edit re-ran on the swapped-in file, nothing lost"
        )
    }

    @Test func aCorruptSwapIsAnErrorThatLeavesItsBytesAndClears() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.set(.language, "fr")
        let garbage = directory.file("half-written.json")
        try write("{\"format\" : 1, \"values\" : {\"lang", to: garbage)
        let calls = Calls()
        await #expect {
            try await store.edit { prefs in
                if calls.count.add(1, ordering: .relaxed).newValue == 1 {
                    Self.swap(garbage, over: file)
                }
                prefs[.counter] = 7
            }
        } throws: { error in
            guard case PreferencesError.corrupted(let path, _) = error else { return false }
            return path.hasSuffix("prefs.json")
        }
        // No policy destroys the bad bytes; the store keeps its last good state.
        #expect(contents(file) == "{\"format\" : 1, \"values\" : {\"lang")
        #expect(store[.language] == "fr")
        #expect(store[.counter] == 0)
        // Someone repairs the file: the same store writes again.
        let repaired = directory.file("repaired.json")
        try write(
            "{\n  \"format\" : 1,\n  \"values\" : {\n    \"language\" : \"it\"\n  }\n}\n",
            to: repaired)
        await Self.swap(repaired, over: file)
        try await store.set(.counter, 8)
        #expect(store[.language] == "it")
        #expect(try storedInteger("counter", in: file) == 8)
        Reliability.report(
            "fault the file swapped between read and write (corrupt file): .corrupted naming the file, its bytes untouched, the store wrote again once the file was repaired"
        )
    }
}
