import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// A store's registration as a replica on files (F2 in
/// Sources/Preferences/Preferences.docc/RollingOutAChange.md), in process.
@Suite(.timeLimit(.minutes(5))) struct ReplicaRegistrationTests {
    @Test func anOpenStoreIsRegisteredUntilItsLastHandleGoes() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var store: PreferencesStore? = try await PreferencesStore(fileURL: url)
        let storage = FileStorage(fileURL: url)
        let me = try #require(try storage.replicas().first)
        #expect(try storage.replicas().count == 1)
        #expect(me.pid == getpid())
        #expect(me.host == Platform.hostName)
        #expect(me.program == PreferencesReplica.currentProgram)
        #expect(me.applied == 0)
        try await store?.set(PreferenceKey<Int>("counter", default: 0), 1)
        // The report is written off the writer's path: await it through the watch.
        let (events, continuation) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch = try storage.watchReplicas { continuation.yield() }
        defer { watch?.cancel() }
        let applied = try await withDeadline("the registration to report change 1") {
            for await _ in events where try storage.replicas().first?.applied == 1 { return true }
            return false
        }
        #expect(applied)
        store = nil
        #expect(try storage.replicas().isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: storage.replicasDirectory) == [])
    }

    @Test func aStoreWithoutLiveReadsDoesNotRegister() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(PreferenceKey<Int>("counter", default: 0), 1)
        #expect(try FileStorage(fileURL: url).replicas().isEmpty)
    }

    @Test func aRegistrationNobodyHoldsIsRemovedByWhoeverLists() async throws {
        let directory = try TemporaryDirectory()
        let storage = FileStorage(fileURL: directory.file("prefs.json"))
        try FileManager.default.createDirectory(
            atPath: storage.replicasDirectory, withIntermediateDirectories: true)
        let dead = PreferencesReplica(
            host: "elsewhere", pid: 4242, program: "gone", manifest: "", since: Date(), applied: 3)
        let path = storage.replicasDirectory + "/elsewhere-4242.json"
        try write(dead.jsonText + "\n", to: URL(fileURLWithPath: path))
        #expect(try storage.replicas().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aReplicaReadsBackAsWritten() throws {
        let replica = PreferencesReplica(
            host: "h", pid: 7, program: "p", manifest: "0123456789abcdef",
            since: Date(timeIntervalSince1970: 1_780_000_000.5), applied: 42)
        #expect(
            replica.jsonText
                == #"{"applied":42,"host":"h","manifest":"0123456789abcdef","pid":7,"program":"p","since":"2026-05-28T20:26:40.5Z"}"#
        )
        #expect(PreferencesReplica(jsonBytes: Array(replica.jsonText.utf8)) == replica)
        #expect(PreferencesReplica(jsonBytes: Array("{\"host\":".utf8)) == nil)
    }
}
