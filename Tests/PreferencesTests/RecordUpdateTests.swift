import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

private struct Profile: PreferencesRecord {
    var name = "guest"
    var volume = 5
    var nickname: String? = nil
    var motto: String? = "carpe diem"
    var theme = Theme.light
    var level = Level.low
    var tags: [String] = []
    var limits: [String: Int] = [:]
    var lastSync: Date? = nil
    var avatar = Data()
    var homepage = URL(string: "https://example.com")!
    var ratio = 0.5
    var window = Window(width: 800, height: 600)
}

private struct Failure: Error {}

/// Same fields as the harness's `record-increment` record.
private struct HarnessRecord: PreferencesRecord {
    var counter = 0
    var label = "harness"
}

@Suite(.scaledTimeLimit(minutes: 5)) struct RecordUpdateTests {
    @Test func anUpdateWritesOnlyTheFieldsItChanged() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<Profile>(fileURL: url)
        #expect(profile.value == Profile())
        try await profile.update { $0.volume = 7 }
        #expect(try storedValues(url) == ["volume": 7])
        try await profile.update { $0.window.height = 700 }
        #expect(try storedValues(url) == ["volume": 7, "window": ["width": 800, "height": 700]])
    }

    @Test func settingANeverSetFieldToItsDefaultWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<Profile>(fileURL: url)
        try await profile.update { $0.volume = 7 }
        let before = try identity(url)
        let result = try await profile.update { $0.name = "guest" }
        #expect(result == Profile(volume: 7))
        #expect(try identity(url) == before)
        #expect(try storedValues(url) == ["volume": 7])
    }

    @Test func aStoredFieldSetBackToItsDefaultStaysStored() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<Profile>(fileURL: url)
        try await profile.update { $0.volume = 7 }
        try await profile.update { $0.volume = 5 }
        #expect(try storedValues(url) == ["volume": 5])
    }

    @Test func anOptionalSetToNilIsRemovedSoItsInitValueApplies() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<Profile>(fileURL: url)
        try await profile.update { $0.nickname = "ace" }
        #expect(try storedValues(url) == ["nickname": "ace"])
        let cleared = try await profile.update { $0.nickname = nil }
        #expect(cleared.nickname == nil)
        #expect(try storedValues(url) == [:])

        let motto = try await profile.update { $0.motto = nil }
        #expect(motto.motto == "carpe diem")
    }

    @Test func everyKindOfFieldRoundTripsThroughTheFile() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        var expected = Profile()
        expected.name = "Zoë"
        expected.nickname = "z"
        expected.theme = .dark
        expected.level = .high
        expected.tags = ["a", "b"]
        expected.limits = ["cpu": 2]
        expected.lastSync = Date(timeIntervalSince1970: 1_800_000_000.25)
        expected.avatar = Data([0, 1, 2, 255])
        expected.homepage = URL(string: "https://example.org/x?y=1")!
        expected.ratio = .infinity
        expected.window = Window(width: 1, height: 2, title: "main")
        let written = expected
        let profile = try await RecordStore<Profile>(fileURL: url)
        #expect(try await profile.update { $0 = written } == expected)

        let stored = try storedValues(url)
        #expect(stored["last_sync"] == nil)  // coding keys are the property names here
        #expect(stored["lastSync"] == "2027-01-15T08:00:00.25Z")
        #expect(stored["avatar"] == "AAEC/w==")
        #expect(stored["theme"] == "dark" && stored["level"] == 2)
        #expect(stored["ratio"] == "Infinity")
        #expect(stored["window"] == ["width": 1, "height": 2, "title": "main"])

        // Decoding the file afresh gives the same record.
        let fresh = try RecordCoding<Profile>().decode(storedValues(url))
        #expect(fresh.record == expected && fresh.problems.isEmpty)
    }

    @Test func aThrowingTransformWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<Profile>(fileURL: url)
        try await profile.update { $0.volume = 1 }
        await #expect(throws: Failure.self) {
            try await profile.update { profile in
                profile.volume = 2
                throw Failure()
            }
        }
        #expect(profile.value.volume == 1)
        #expect(try storedValues(url) == ["volume": 1])
    }

    @Test func theFeedStartsWithTheCurrentRecordAndSkipsUnrelatedKeys() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let store = try await PreferencesStore(fileURL: url)
        let profile = store.record(Profile.self)
        try await profile.update { $0.volume = 3 }
        var feed = profile.changes().makeAsyncIterator()
        #expect(try await feed.next("the current record").volume == 3)

        // A key that is not a field yields nothing. What it yielded would be
        // in a feed when the edit returns (C2), kept as the newest value of a
        // feed nobody reads; so a second feed, ended after it, hands it out.
        var quiet = profile.changes().makeAsyncIterator()
        #expect(try await quiet.next("the second feed's current record").volume == 3)
        let spurious = try await quiet.cancelAndTakeBuffered("an edit of a key that is no field") {
            try await store.edit { $0[raw: "unrelated"] = 1 }
        }
        #expect(
            spurious == nil,
            "an edit of a key that is no field yielded \(String(describing: spurious))")

        try await store.edit { $0[raw: "name"] = "host" }
        #expect(
            try await feed.next("the record after name was set") == Profile(name: "host", volume: 3)
        )
        try await profile.update { $0.volume = 4 }
        #expect(try await feed.next("the record after update").volume == 4)
    }

    @Test func aRecordStoreSeesAnotherProcesssWrite() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<HarnessRecord>(fileURL: url)
        var feed = profile.changes().makeAsyncIterator()
        #expect(try await feed.next("the current record") == HarnessRecord())
        let output = try await runChild("prefs-harness", ["record-increment", url.path, "1"])
        #expect(output.status == 0, "record-increment: \(output.standardError)")
        #expect(output.standardOutput == "done\n")
        #expect(try await feed.next("the other process's increment").counter == 1)
    }

    @Test func concurrentUpdatesFromManyTasksLoseNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        let profile = try await RecordStore<HarnessRecord>(fileURL: url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    for _ in 0..<10 { try await profile.update { $0.counter += 1 } }
                }
            }
            try await group.waitForAll()
        }
        #expect(profile.value.counter == 500)
        #expect(try storedValues(url) == ["counter": 500])
    }

    @Test func concurrentUpdatesFromFourProcessesLoseNothing() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("profile.json")
        try write(#"{"format": 1, "values": {"written_by": "a newer app"}}"#, to: url)
        let children = try (0..<4).map { _ in
            try RunningProcess("prefs-harness", ["record-increment", url.path, "250"])
        }
        let profile = try await RecordStore<HarnessRecord>(fileURL: url)
        for _ in 0..<100 { try await profile.update { $0.label += "." } }
        for child in children {
            #expect(try await child.nextLine() == "done")
            #expect(try await child.exit() == 0)
        }
        try await profile.store.reload()
        #expect(profile.value.counter == 1000)
        #expect(profile.value.label == "harness" + String(repeating: ".", count: 100))
        #expect(try storedValues(url)["written_by"] == "a newer app")
    }
}
