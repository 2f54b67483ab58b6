import Dispatch
import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// A store's registration as a replica on files (F2 in
/// Sources/Preferences/Preferences.docc/RollingOutAChange.md), in process.
@Suite(.scaledTimeLimit(minutes: 5)) struct ReplicaRegistrationTests {
    @Test func anOpenStoreIsRegisteredUntilItsLastHandleGoes() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var store: PreferencesStore? = try await PreferencesStore(fileURL: url)
        // The open registers the process after it returns, off its path.
        await store?.registeredAsReplica()
        let storage = FileStorage(fileURL: url)
        let registry = try #require(storage.replicas)
        let me = try #require(try registry.list().first)
        #expect(try registry.list().count == 1)
        #expect(me.pid == getpid())
        #expect(me.host == Platform.hostName)
        #expect(me.program == PreferencesReplica.currentProgram)
        #expect(me.applied == 0)
        try await store?.set(PreferenceKey<Int>("counter", default: 0), 1)
        // The report is written off the writer's path: await it through the watch.
        let (events, continuation) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch = try registry.watch { continuation.yield() }
        defer { watch?.cancel() }
        let applied = try await withDeadline("the registration to report change 1") {
            for await _ in events where try registry.list().first?.applied == 1 { return true }
            return false
        }
        #expect(applied)
        store = nil
        #expect(try registry.list().isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: storage.replicasDirectory) == [])
    }

    @Test func aStoreWithoutLiveReadsDoesNotRegister() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(PreferenceKey<Int>("counter", default: 0), 1)
        // Registration comes up to a second after an open. A store with live
        // reads opened after this one registers when that time has passed
        // (the opens waiting then register together): await it, through the
        // watch of its registrations, not asking it to register sooner.
        let witness = FileStorage(fileURL: directory.file("witness.json"))
        let registry = try #require(witness.replicas)
        let (events, continuation) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch = try #require(
            try registry.watch { continuation.yield() }, "a watch of the registrations")
        defer { watch.cancel() }
        let live = try await PreferencesStore(storage: witness)
        let registered = try await withDeadline("the store with live reads to register") {
            for await _ in events where try !registry.list().isEmpty { return true }
            return false
        }
        #expect(registered)
        // And this store, asked, finds that it is not to register.
        await store.registeredAsReplica()
        #expect(try FileStorage(fileURL: url).replicas?.list().isEmpty == true)
        withExtendedLifetime(live) {}
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
        #expect(try storage.replicas?.list().isEmpty == true)
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

/// A memory backend that registers replicas and counts what each
/// registration is told, with a gate that holds every report back until
/// opened (to show reports that come meanwhile are merged), and a switch
/// that refuses registrations (a cluster out of reach).
final class CountingRegistrar: PreferencesStorage, @unchecked Sendable {
    let memory = InMemoryStorage()
    let updates = Locked<[PreferencesReplica]>([])
    let refusing = Locked(false)
    let refused = Locked(0)
    let registrations = Locked(0)
    let gate = DispatchSemaphore(value: 0)
    let gated = Locked(false)

    final class Registration: ReplicaRegistration, @unchecked Sendable {
        let owner: CountingRegistrar
        init(_ owner: CountingRegistrar) { self.owner = owner }
        func update(_ replica: PreferencesReplica) throws {
            if owner.gated.withLock({ $0 }) { owner.gate.wait() }
            owner.updates.withLock { $0.append(replica) }
        }
        func close() {}
    }

    var location: String { memory.location }
    func beginOpening() -> StorageOpening { memory.beginOpening() }
    var tuning: StorageTuning { memory.tuning }
    var historyArchive: (any HistoryArchive)? { nil }
    var manifests: (any ManifestPublishing)? { nil }
    var replicas: (any ReplicaRegistry)? { Registry(owner: self) }
    var privacy: (any StoragePrivacy)? { nil }
    func read() throws -> StoredContents { try memory.read() }
    func currentRevision() throws -> StorageRevision { try memory.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        try memory.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try memory.withExclusiveAccess(body)
    }
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try memory.setAsideCorrupt(contents, stamp: stamp)
    }
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    { try memory.watch(onEvent) }

    struct Registry: ReplicaRegistry {
        let owner: CountingRegistrar
        func register(_ replica: PreferencesReplica) throws -> (any ReplicaRegistration)? {
            if owner.refusing.withLock({ $0 }) {
                owner.refused.withLock { $0 += 1 }
                throw PreferencesError.io(
                    operation: "register replica", path: owner.location, code: EIO,
                    message: "no endpoint answered")
            }
            owner.registrations.withLock { $0 += 1 }
            return Registration(owner)
        }
        func list() throws -> [PreferencesReplica] { [] }
        func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
            nil
        }
    }
}

@Suite(.scaledTimeLimit(minutes: 5)) struct ReplicaReportingTests {
    @Test func eachChangeCostsAtMostOneReportAndABurstIsMerged() async throws {
        let storage = CountingRegistrar()
        let store = try await PreferencesStore(storage: storage)
        // Registered first, so every change below is one to report.
        await store.registeredAsReplica()
        let counter = PreferenceKey<Int>("counter", default: 0)
        for value in 1...20 { try await store.set(counter, value) }
        // Reports are written off the writer's path; the last one is awaited.
        #expect(
            await eventually { storage.updates.withLock { $0.last?.applied } == 20 },
            "the report of change 20")
        let sequential = storage.updates.withLock { $0.map(\.applied) }
        #expect(sequential.count <= 20)
        #expect(sequential == sequential.sorted())
        // Held back while 50 changes are made: they are reported together.
        storage.gated.withLock { $0 = true }
        try await store.set(counter, 21)
        for value in 22...70 { try await store.set(counter, value) }
        storage.gated.withLock { $0 = false }
        storage.gate.signal()
        #expect(
            await eventually { storage.updates.withLock { $0.last?.applied } == 70 },
            "the report of change 70")
        let burst = storage.updates.withLock { Array($0.dropFirst(sequential.count)) }
        // The report held at the gate (of 21, or of a later change if it
        // started late), then at most one for the rest: 50 changes, at most
        // two writes.
        #expect((1...2).contains(burst.count), "\(burst.map(\.applied))")
        withExtendedLifetime(store) {}
    }

    /// A registration refused (an etcd cluster down at that moment) is a
    /// problem while it lasts and is tried again, not given up: once the
    /// backend takes it, the process is registered and the problem gone.
    @Test func aRefusedRegistrationIsListedThenTriedAgainUntilMade() async throws {
        let storage = CountingRegistrar()
        storage.refusing.withLock { $0 = true }
        let store = try await PreferencesStore(storage: storage)
        let problems = FeedRecorder(store.problemChanges())
        await store.registeredAsReplica()
        let refused = await problems.next(where: { list in
            list.contains { $0.message.contains("could not register itself") }
        })
        #expect(refused != nil, "the refused registration among the problems: \(store.problems)")
        // Two attempts come without retrying (the one awaited above, and the
        // one scheduled at the open); a third is a retry.
        #expect(
            await eventually(seconds: 30) { storage.refused.withLock { $0 } >= 3 },
            "a third attempt, \(storage.refused.withLock { $0 }) so far")
        #expect(storage.registrations.withLock { $0 } == 0)
        storage.refusing.withLock { $0 = false }
        #expect(await problems.next([]) == [], "problems: \(store.problems)")
        #expect(storage.registrations.withLock { $0 } == 1)
        withExtendedLifetime(store) {}
    }
}
