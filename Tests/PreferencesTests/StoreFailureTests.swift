import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct StoreFailureTests {
    static let validFile = """
        {
          "format" : 1,
          "values" : {
            "counter" : "seven",
            "language" : "fr"
          },
          "version" : 3
        }

        """

    @Test func typeMismatchReadsTheDefaultReportsAndThrowsOnDemand() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write(Self.validFile, to: url)
        let store = try await PreferencesStore(fileURL: url)
        #expect(store[.counter] == 0)
        #expect(store[.language] == "fr")
        #expect(store.snapshot.version == 3)
        #expect(store.problems.map(\.key) == ["counter"])
        #expect(throws: PreferencesError.self) { try store.value(for: .counter) }
        do {
            _ = try store.value(for: .counter)
        } catch let error as PreferencesError {
            guard case .typeMismatch(let key, _, let found) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(key == "counter")
            #expect(found.contains("\"seven\""))
        }
        // Fixing the value clears the problem.
        try await store.set(.counter, 7)
        #expect(store.problems.isEmpty)
    }

    static let corruptFiles: [(String, String)] = [
        ("not json", "not valid JSON"),
        ("", "empty"),
        ("[1, 2]", "expected a JSON object"),
        (#"{"format": 2, "values": {}}"#, "unknown format 2"),
        (#"{"values": {}}"#, "missing the \"format\""),
        (#"{"format": 1}"#, "missing the \"values\""),
        (#"{"format": 1, "values": {}, "version": -1}"#, "non-negative"),
        (#"{"format": 1, "values": {"": 1}}"#, "may not be empty"),
        ("{\"format\": 1, \"values\": {\"a\": tru", "line 1"),
    ]

    @Test(arguments: corruptFiles)
    func corruptFileFailsByDefaultAndIsLeftByteForByte(text: String, reason: String) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write(text, to: url)
        await #expect {
            _ = try await PreferencesStore(fileURL: url)
        } throws: { error in
            guard case PreferencesError.corrupted(let file, let message) = error else {
                return false
            }
            return file == url.path && message.contains(reason)
        }
        #expect(contents(url) == text)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["prefs.json"])
    }

    @Test func backupAndResetKeepsTheBadBytesAndStartsEmpty() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write("garbage{", to: url)
        let store = try await PreferencesStore(fileURL: url, corruption: .backupAndReset)
        #expect(store.snapshot.values.isEmpty)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let backup = try #require(names.first { $0.hasPrefix("prefs.json.corrupt-") })
        #expect(contents(directory.file(backup)) == "garbage{")
        #expect(store.problems.count == 1)
        try await store.set(.darkMode, true)
        #expect(contents(url)?.contains("dark_mode") == true)
    }

    @Test func replaceSuppliesValuesAndKeepsTheBadBytes() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write("\u{0}\u{1}binary", to: url)
        let store = try await PreferencesStore(
            fileURL: url, corruption: .replace { _ in ["language": "de"] })
        #expect(store[.language] == "de")
        #expect(contents(url)?.contains("\"language\" : \"de\"") == true)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.contains { $0.hasPrefix("prefs.json.corrupt-") })
    }

    @Test func aCorruptFileWrittenLaterFailsWritesWithoutTouchingIt() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        try write("{oops", to: url)
        await #expect(throws: PreferencesError.self) { try await store.set(.counter, 2) }
        #expect(contents(url) == "{oops")
        #expect(store[.counter] == 1)
    }

    @Test func keysAreValidated() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let controls = ["tab\there", "del\u{7F}", "next\u{85}line", "c1\u{9F}", "\u{80}"]
        for bad in ["", String(repeating: "k", count: 1025)] + controls {
            await #expect {
                try await store.set(PreferenceKey<Int>(bad, default: 0), 1)
            } throws: { error in
                if case PreferencesError.invalidKey = error { return true }
                return false
            }
        }
        try await store.set(PreferenceKey<Int>(String(repeating: "k", count: 1024), default: 0), 1)
        // Neighbours of the control characters are fine: U+00A0, Â (0xC3 0x82),
        // and characters whose UTF-8 has 0x80 to 0x9F after another lead byte.
        for good in ["nbsp\u{A0}", "Â", "\u{C2}\u{A0}", "é€", "\u{100}", "emoji😀"] {
            try await store.set(PreferenceKey<Int>(good, default: 0), 1)
        }
    }

    @Test func writesOverTheLimitsFailAndChangeNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var limits = PreferencesLimits()
        // Room for one short value and its change record, not for 300 bytes
        // more. (No history: its entries' size depends on the machine's and
        // the user's names.)
        limits.maxFileSize = 480
        limits.history = .off
        limits.maxDepth = 3
        let store = try await PreferencesStore(fileURL: url, limits: limits)
        try await store.set(.language, "fr")
        let before = contents(url)
        await #expect {
            try await store.set(.language, String(repeating: "x", count: 300))
        } throws: { error in
            if case PreferencesError.limitExceeded = error { return true }
            return false
        }
        await #expect(throws: PreferencesError.self) {
            try await store.edit { $0[raw: "deep"] = [[[[1]]]] }
        }
        try await store.edit { $0[raw: "deep"] = [[[1]]] }
        #expect(store[.language] == "fr")
        #expect(contents(url) != before)
        #expect(contents(url)?.contains("xxx") == false)
    }

    @Test func oversizedOrTooDeepFilesAreCorrupt() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var limits = PreferencesLimits()
        limits.maxFileSize = 64
        try write(
            #"{"format": 1, "values": {"a": "\#(String(repeating: "x", count: 100))"}}"#, to: url)
        await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(fileURL: url, limits: limits)
        }
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        try write(#"{"format": 1, "values": {"a": \#(deep)}}"#, to: url)
        await #expect {
            _ = try await PreferencesStore(fileURL: url)
        } throws: { error in
            "\(error)".contains("nested deeper")
        }
    }

    @Test func oneFailingEditInAGroupDoesNotDisturbTheOthers() async throws {
        struct Refused: Error {}
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<50 {
                group.addTask {
                    do {
                        try await store.edit { prefs in
                            if index == 25 { throw Refused() }
                            prefs[.counter] += 1
                        }
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 49)
        #expect(store[.counter] == 49)
    }

    @Test func cancelledEditFailsAloneAndLeavesNoLockHeld() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await store.set(.counter, 5)
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        try await store.set(.language, "fr")
        // Another process can still take the lock and write.
        let child = try await runChild("prefs-harness", ["increment", url.path, "counter", "3"])
        #expect(child.status == 0)
        try await store.edit { $0[.counter] += 1 }
        #expect(store[.counter] == 4)
    }
}
