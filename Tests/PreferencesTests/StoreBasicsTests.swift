import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct StoreBasicsTests {
    @Test func missingFileIsAnEmptyStoreWithDefaults() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("none.json"))
        #expect(store[.darkMode] == false)
        #expect(store[.language] == "en")
        #expect(store.snapshot.values.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.file("none.json").path))
    }

    @Test func setIsOnDiskWhenItReturnsInTheDocumentedFormat() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.darkMode, true)
        try await store.set(.language, "fr")
        // Change times differ from run to run; everything else is fixed.
        let text = (contents(url) ?? "")
            .replacingOccurrences(
                of: #""at" : "[0-9T:.-]+Z""#, with: #""at" : "…""#, options: .regularExpression
            )
            .replacingOccurrences(
                of: #""at":"[0-9T:.-]+Z""#, with: #""at":"…""#, options: .regularExpression
            )
            .replacingOccurrences(
                of: #""history_id" : "[0-9a-f]{32}""#, with: #""history_id" : "…""#,
                options: .regularExpression)
        let program = ProcessInfo.processInfo.processName
        let user = effectiveUserName()
        let host = Platform.hostName
        #expect(
            text == """
                {
                  "format" : 1,
                  "history" : [
                    {"sequence":1,"at":"…","by":"\(user)","program":"\(program)","host":"\(host)","changes":{"dark_mode":{"new":true}}},
                    {"sequence":2,"at":"…","by":"\(user)","program":"\(program)","host":"\(host)","changes":{"language":{"new":"fr"}}}
                  ],
                  "history_id" : "…",
                  "history_keep" : {
                    "bytes" : 1048576,
                    "entries" : 1000
                  },
                  "modified" : {
                    "dark_mode" : {
                      "at" : "…",
                      "by" : "\(effectiveUserName())",
                      "program" : "\(program)"
                    },
                    "language" : {
                      "at" : "…",
                      "by" : "\(effectiveUserName())",
                      "program" : "\(program)"
                    }
                  },
                  "sequence" : 2,
                  "values" : {
                    "dark_mode" : true,
                    "language" : "fr"
                  },
                  "version" : 0
                }

                """)
        #expect(store[.darkMode] == true)
    }

    @Test func defaultsAreNeverWrittenAndRemoveBringsThemBack() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.mapZoom, 15)
        #expect(try fileSnapshot(url).values == ["map_zoom": 15.0])
        try await store.remove(.mapZoom)
        #expect(store[.mapZoom] == 14)
        #expect(try fileSnapshot(url).values.isEmpty)
        // A new default in code applies to everyone who never set the key.
        let newDefault = PreferenceKey<Double>("map_zoom", default: 12)
        #expect(store[newDefault] == 12)
    }

    @Test func editIsOneAtomicWriteAndReturnsItsResult() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let result = try await store.edit { prefs in
            prefs[.darkMode] = true
            prefs[.mapZoom] = 15
            prefs[.counter] += 2
            return prefs[.counter]
        }
        #expect(result == 2)
        #expect(try storedValues(url) == ["dark_mode": true, "map_zoom": 15.0, "counter": 2])
    }

    @Test func clearRemovesEveryKey() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.edit { prefs in
            prefs[.darkMode] = true
            prefs[.language] = "de"
        }
        try await store.clear()
        #expect(store.snapshot.values.isEmpty)
        #expect(store[.language] == "en")
    }

    @Test func aThrowingTransformWritesNothing() async throws {
        struct Refused: Error {}
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        let before = try identity(url)
        await #expect(throws: Refused.self) {
            try await store.edit { prefs in
                prefs[.counter] = 99
                throw Refused()
            }
        }
        #expect(store[.counter] == 1)
        #expect(try identity(url) == before)
        // The lock was released: another process can write at once.
        #expect(
            try await runChild("prefs-harness", ["increment", url.path, "counter", "1"]).status == 0
        )
        try await store.edit { $0[.counter] += 1 }
        #expect(store[.counter] == 3)
    }

    @Test func aReadErrorFailsTheUpdateAndTheStoreRecoversAfterwards() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        // Another program puts a directory where the file was.
        try FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        await #expect {
            try await store.set(.counter, 2)
        } throws: { error in
            guard case PreferencesError.io(_, let path, let code, _) = error else { return false }
            return path == url.path && code == EISDIR
        }
        #expect(store[.counter] == 1)
        try FileManager.default.removeItem(at: url)
        try await store.set(.counter, 2)
        #expect(store[.counter] == 2)
        #expect(contents(url)?.contains("\"counter\" : 2") == true)
    }

    @Test func anEditThatChangesNothingLeavesTheFileAlone() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "fr")
        let before = try identity(url)
        let bytes = contents(url)
        try await store.set(.language, "fr")
        try await store.edit { $0[.language] = "fr" }
        try await store.remove(.darkMode)
        #expect(try identity(url) == before)
        #expect(contents(url) == bytes)
    }

    @Test func readDuringASlowEditSeesTheOldValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        try await store.set(.counter, 1)
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let release = DispatchSemaphore(value: 0)
        let gaveUp = Locked(false)
        let edit = Task {
            try await store.edit { prefs in
                prefs[.counter] = 2
                startedContinuation.yield()
                // On the store's queue, not the cooperative pool; bounded all the same.
                if release.wait(timeout: .now() + TestTime.scaled(seconds: 60)) == .timedOut {
                    gaveUp.withLock { $0 = true }
                }
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        #expect(store[.counter] == 1)
        release.signal()
        try await edit.value
        #expect(!gaveUp.withLock { $0 }, "the slow edit was never released")
        #expect(store[.counter] == 2)
    }

    /// S1's other half: an edit's values are published only once its write
    /// has committed, so a read while the write is under way sees the state
    /// before it.
    @Test func readDuringASlowWriteSeesTheOldValueUntilItCommits() async throws {
        let directory = try TemporaryDirectory()
        let (writing, writingContinuation) = AsyncStream<Void>.makeStream()
        let holding = Locked(false)
        let release = DispatchSemaphore(value: 0)
        let gaveUp = Locked(false)
        let storage = HookedStorage(
            FileStorage(fileURL: directory.file("prefs.json")),
            beforeWrite: {
                guard holding.withLock({ $0 }) else { return }
                writingContinuation.yield()
                // On the store's queue, not the cooperative pool; bounded all the same.
                if release.wait(timeout: .now() + TestTime.scaled(seconds: 60)) == .timedOut {
                    gaveUp.withLock { $0 = true }
                }
            })
        let store = try await PreferencesStore(storage: storage)
        try await store.set(.counter, 1)
        holding.withLock { $0 = true }
        let edit = Task { try await store.set(.counter, 2) }
        var iterator = writing.makeAsyncIterator()
        _ = await iterator.next()
        #expect(store[.counter] == 1, "a read saw the edit before its write was made")
        #expect(store.snapshot.values["counter"] == 1)
        release.signal()
        try await edit.value
        #expect(!gaveUp.withLock { $0 }, "the held write was never released")
        #expect(store[.counter] == 2)
    }

    @Test func twoHandlesOnOneFileShareOneState() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let first = try await PreferencesStore(fileURL: url)
        let second = try await PreferencesStore(fileURL: url)
        try await first.set(.language, "fr")
        #expect(second[.language] == "fr")
        async let a: Void = first.edit { $0[.counter] += 1 }
        async let b: Void = second.edit { $0[.counter] += 1 }
        _ = try await (a, b)
        #expect(first[.counter] == 2)
        #expect(second[.counter] == 2)
    }

    @Test func aFurtherHandleReReadsTheFileAndAppliesItsOwnCorruptionPolicy() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let first = try await PreferencesStore(fileURL: url)
        try await first.set(.counter, 1)
        // Another program replaces the file.
        try write(#"{"format": 1, "values": {"counter": 7}}"#, to: url)
        let second = try await PreferencesStore(fileURL: url)
        #expect(second[.counter] == 7)
        #expect(first[.counter] == 7)
        // Then leaves garbage: the default policy refuses, backupAndReset recovers.
        try write("garbage", to: url)
        await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(fileURL: url)
        }
        let third = try await PreferencesStore(fileURL: url, corruption: .backupAndReset)
        #expect(third[.counter] == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.contains { $0.hasPrefix("prefs.json.corrupt-") })
        let moved = try #require(names.first { $0.hasPrefix("prefs.json.corrupt-") })
        #expect(third.problems.contains { $0.message.hasSuffix(moved) })
        try await first.set(.counter, 2)
        #expect(third[.counter] == 2)
        // Reading a valid file again, written by another program, does not
        // hide where the bad one went.
        try write(#"{ "format" : 1, "values" : { "counter" : 3 } }"#, to: url)
        try await third.reload()
        #expect(third[.counter] == 3)
        #expect(third.problems.contains { $0.message.hasSuffix(moved) }, "\(third.problems)")
    }

    @Test func datesOutsideTheYears0To9999AreRefusedNotCrashed() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        for date in [
            Date(timeIntervalSinceReferenceDate: 1e19), Date(timeIntervalSinceReferenceDate: 1e12),
            Date(timeIntervalSinceReferenceDate: -1e12), Date(timeIntervalSinceReferenceDate: .nan),
        ] {
            await #expect {
                try await store.set(.when, date)
            } throws: { error in
                guard case PreferencesError.invalidValue(let key, let reason) = error else {
                    return false
                }
                return key == "when" && reason.contains("0000–9999")
            }
        }
        let latest = Date(timeIntervalSince1970: 253_402_300_799)
        try await store.set(.when, latest)
        #expect(store[.when] == latest)
        #expect(store.snapshot.values["when"] == "9999-12-31T23:59:59Z")
        // Inside a Codable value too.
        await #expect(throws: PreferencesError.self) {
            try await store.set(.lastSync, Date(timeIntervalSinceReferenceDate: 1e12))
        }
    }

    @Test func aReplacementWithAnInvalidKeyLeavesTheCorruptFileInPlace() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write("garbage", to: url)
        await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(fileURL: url, corruption: .replace { _ in ["": 1] })
        }
        #expect(contents(url) == "garbage")
    }

    @Test func symlinkedFileIsFollowedAndTheLinkKept() async throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("real.json")
        let link = directory.file("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let store = try await PreferencesStore(fileURL: link)
        try await store.set(.darkMode, true)
        let attributes = try FileManager.default.attributesOfItem(atPath: link.path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(contents(target)?.contains("\"dark_mode\" : true") == true)
        // The same file through its real name is the same state.
        let direct = try await PreferencesStore(fileURL: target)
        #expect(direct[.darkMode] == true)
    }

    @Test func missingParentDirectoriesAreCreatedPrivate() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("a/b/prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.darkMode, true)
        #expect(try permissions(directory.url.appendingPathComponent("a")) == 0o700)
        #expect(try permissions(directory.url.appendingPathComponent("a/b")) == 0o700)
        #expect(try permissions(url) == 0o600)
    }

    /// S14: a replaced file keeps the permission bits it had, here 0640
    /// given by its owner, instead of the 0600 of a new file.
    @Test func aReplacedFileKeepsItsPermissionBits() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        #expect(try permissions(url) == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: url.path)
        try await store.set(.counter, 2)
        #expect(
            try permissions(url) == 0o640, "the write replaced the file with other permission bits")
        #expect(try storedInteger("counter", in: url) == 2)
    }

    @Test func filesAre0600AndNoTemporaryFilesAreLeft() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        // Registered now, not up to a second after the open: its folder is
        // among the files below.
        await store.registeredAsReplica()
        for value in 0..<20 { try await store.set(.counter, value) }
        #expect(try permissions(url) == 0o600)
        #expect(try permissions(directory.file("prefs.json.lock")) == 0o600)
        // Twenty changes move the older history entries to the archive.
        #expect(try permissions(directory.file("prefs.json.history")) == 0o600)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(
            names == [
                "prefs.json", "prefs.json.history", "prefs.json.lock", "prefs.replicas.d",
            ])
    }

    @Test func temporaryFilesLeftByAKilledWriterAreRemovedOnTheNextWrite() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write("half a write", to: directory.file(".prefs.json.abcdefghijkl.tmp"))
        try write("someone else's", to: directory.file(".other.json.abcdefghijkl.tmp"))
        try write("not ours", to: directory.file(".prefs.json.notes.tmp"))
        let store = try await PreferencesStore(fileURL: url)
        await store.registeredAsReplica()
        try await store.set(.counter, 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(
            names == [
                ".other.json.abcdefghijkl.tmp", ".prefs.json.notes.tmp", "prefs.json",
                "prefs.json.lock", "prefs.replicas.d",
            ])
    }

    @Test func aDirectoryWhereTheFileShouldBeIsAnIOError() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        await #expect {
            _ = try await PreferencesStore(fileURL: url)
        } throws: { error in
            guard case PreferencesError.io(_, let path, let code, _) = error else { return false }
            return path == url.path && code == EISDIR
        }
    }

    @Test func aFIFOWhereTheFileShouldBeIsAnIOErrorNotAHang() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        #expect(mkfifo(url.path, 0o600) == 0)
        await #expect {
            _ = try await PreferencesStore(fileURL: url)
        } throws: { error in
            guard case PreferencesError.io(_, let path, _, let message) = error else {
                return false
            }
            return path == url.path && message == "not a regular file"
        }
        #expect(throws: PreferencesError.self) {
            _ = try LegacyReader.read(.properties, at: url)
        }
    }

    @Test func suiteNamesResolveAndCannotEscape() throws {
        let environment = ["PREFS_HOME": "/srv/prefs", "XDG_CONFIG_HOME": "/x", "HOME": "/home/u"]
        #expect(
            try PreferencesLocation.fileURL(suite: "com.example.app", environment: environment).path
                == "/srv/prefs/com.example.app.json")
        #expect(
            try PreferencesLocation.fileURL(
                suite: "default", environment: ["XDG_CONFIG_HOME": "/x"]
            )
            .path == "/x/prefs/default.json")
        #if !canImport(Darwin)
            #expect(
                try PreferencesLocation.fileURL(suite: "s", environment: ["HOME": "/home/u"]).path
                    == "/home/u/.config/prefs/s.json")
        #endif
        for bad in ["", ".hidden", "../etc/passwd", "a/b", "name with space", "ü"] {
            #expect(throws: PreferencesError.invalidSuiteName(bad)) {
                try PreferencesLocation.fileURL(suite: bad, environment: environment)
            }
        }
    }

    @Test func registeredDefaultsApplyToUntypedKeysAndAreNotWritten() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        store.register(defaults: ["retries": 3])
        #expect(store.snapshot.value(forKey: "retries") == 3)
        try await store.edit { $0[raw: "retries"] = 5 }
        #expect(store.snapshot.value(forKey: "retries") == 5)
        try await store.edit { $0[raw: "retries"] = nil }
        #expect(store.snapshot.value(forKey: "retries") == 3)
        #expect(try fileSnapshot(url).values["retries"] == nil)
    }

    @Test func inMemoryBackendWorksForTests() async throws {
        let storage = InMemoryStorage()
        let store = try await PreferencesStore(storage: storage)
        try await store.set(.language, "it")
        #expect(store[.language] == "it")
        #expect(
            String(decoding: storage.bytes ?? [], as: UTF8.self).contains("\"language\" : \"it\""))
    }
}
