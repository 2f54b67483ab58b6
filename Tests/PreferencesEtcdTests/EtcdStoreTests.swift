import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// The store's semantics (S1, S4–S9, R, M, C1–C6) on the etcd backend,
/// against a real single-member cluster, and interplay with `etcdctl`.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 3))
struct EtcdStoreTests {
    /// A store on a fresh key of the shared cluster; with `replica`, a
    /// store that shares no state with others in this process (another
    /// service instance).
    func open(
        _ cluster: EtcdCluster, _ key: String, replica: Bool = false,
        migrations: [any PreferencesMigration] = [], corruption: CorruptionPolicy = .fail,
        liveReads: Bool = true
    ) async throws -> PreferencesStore {
        try await PreferencesStore(
            storage: cluster.storage(key, sharesState: !replica), migrations: migrations,
            corruption: corruption, liveReads: liveReads)
    }

    /// The value `etcdctl get` prints for `key`.
    func etcdctlGet(_ cluster: EtcdCluster, _ key: String) async throws -> String {
        let result = try await offPool { try cluster.etcdctl(["get", key, "--print-value-only"]) }
        #expect(result.status == 0, "etcdctl: \(result.standardError)")
        return result.standardOutput
    }

    func etcdctlPut(_ cluster: EtcdCluster, _ key: String, _ value: String) async throws {
        let result = try await offPool { try cluster.etcdctl(["put", key], input: value) }
        #expect(result.status == 0, "etcdctl: \(result.standardError)")
    }

    @Test func aSetIsStoredAsTheFileFormatAndEtcdctlGetShowsIt() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await open(cluster, key)
        try await store.edit { prefs in
            prefs[.darkMode] = true
            prefs[.language] = "fr"
        }
        let directory = try TemporaryDirectory()
        let file = try await PreferencesStore(fileURL: directory.file("same.json"))
        try await file.edit { prefs in
            prefs[.darkMode] = true
            prefs[.language] = "fr"
        }
        let shown = try await etcdctlGet(cluster, key)
        // etcdctl adds a newline after the value; the change records' times differ.
        #expect(
            withoutChangeRecords(shown)
                == withoutChangeRecords(contents(directory.file("same.json"))))
        #expect(shown.hasSuffix("}\n\n"))
        #expect(shown.contains("\"modified\""))
        #expect(shown.contains("\"language\" : \"fr\""))
    }

    @Test func aWriteIsReadBackByANewReplicaAndTwoHandlesShareOneState() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let first = try await open(cluster, key)
        let second = try await open(cluster, key)
        try await first.set(.mapZoom, 15)
        // S9: the second handle shares the first's state, with no reload.
        #expect(second[.mapZoom] == 15)
        let replica = try await open(cluster, key, replica: true)
        #expect(replica[.mapZoom] == 15)
        #expect(replica[.language] == "en", "S6: defaults apply to keys never set")
    }

    @Test func anotherReplicasWriteReachesTheFeedAndTheSynchronousReads() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let watcher = try await open(cluster, key, replica: true)
        let writer = try await open(cluster, key, replica: true)
        let feed = FeedRecorder(watcher.changes(.counter))
        #expect(await feed.next(0) == 0, "C1: the current value first")
        for value in 1...5 {
            try await writer.set(.counter, value)
        }
        #expect(await feed.next(5) == 5)
        #expect(watcher[.counter] == 5)
        let seen = feed.values
        #expect(seen == seen.sorted(), "the feed never goes back: \(seen)")
    }

    @Test func aDocumentPutWithEtcdctlReachesTheFeed() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await open(cluster, key)
        let feed = FeedRecorder(store.changes(.language))
        #expect(await feed.next("en") == "en")
        try await etcdctlPut(cluster, key, storeFile(#"{ "language" : "de" }"#))
        #expect(await feed.next("de") == "de")
        #expect(store[.language] == "de")
    }

    @Test func aCorruptDocumentPutWithEtcdctlKeepsTheLastGoodStateAndIsReported() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await open(cluster, key)
        try await store.set(.counter, 1)
        let feed = FeedRecorder(store.changes(.counter))
        let problems = FeedRecorder(store.problemChanges())
        #expect(await feed.next(1) == 1)
        #expect(await problems.next([]) == [])

        try await etcdctlPut(cluster, key, "{ \"format\" : 1, \"values\" : { \"counter\" : ")
        let reported = await problems.next(where: { list in
            list.contains { $0.message.contains(key) && $0.message.contains("not valid JSON") }
        })
        #expect(reported != nil, "problems: \(store.problems)")
        #expect(store[.counter] == 1)
        // A write refuses to replace the corrupt document (S17) and keeps it.
        await #expect {
            try await store.set(.counter, 2)
        } throws: { error in
            guard case PreferencesError.corrupted(let file, _) = error else { return false }
            return file == key
        }
        #expect(try await etcdctlGet(cluster, key).hasPrefix("{ \"format\" : 1, \"values\""))

        try await etcdctlPut(cluster, key, storeFile(#"{ "counter" : 3 }"#))
        #expect(await feed.next(3) == 3)
        #expect(await problems.next([]) == [])
        #expect(!feed.values.contains(0), "the corrupt document never read as empty")
    }

    @Test func aCorruptDocumentAtOpenFailsOrIsMovedToASiblingKey() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        try await etcdctlPut(cluster, key, "not json")
        await #expect {
            _ = try await open(cluster, key)
        } throws: { error in
            guard case PreferencesError.corrupted(let file, _) = error else { return false }
            return file == key
        }
        #expect(try await etcdctlGet(cluster, key) == "not json\n", ".fail touches nothing")

        let store = try await open(cluster, key, replica: true, corruption: .backupAndReset)
        #expect(store.snapshot.values.isEmpty)
        let listed = try await offPool {
            try cluster.etcdctl(["get", key + ".corrupt-", "--prefix"])
        }
        let lines = listed.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "one backup key and its value: \(lines)")
        #expect(lines.first?.hasPrefix(key + ".corrupt-") == true)
        #expect(lines.last == "not json")
        #expect(store.problems.contains { $0.message.contains(key + ".corrupt-") })
        try await store.set(.counter, 1)
        #expect(try await etcdctlGet(cluster, key).contains("\"counter\" : 1"))
    }

    @Test func settingAsideComparesTheRevisionThatWasFoundCorrupt() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let storage = try cluster.storage(key, sharesState: false)
        let corrupt = try await offPool {
            _ = try storage.write(Array("garbage".utf8), ifRevision: .absent)
            return try storage.read()
        }
        try await etcdctlPut(cluster, key, "repaired")
        let place = try await offPool {
            try storage.setAsideCorrupt(corrupt, stamp: "20260101T000000Z")
        }
        #expect(place == nil)
        #expect(try await etcdctlGet(cluster, key) == "repaired\n")
        let backups = try await offPool {
            try cluster.etcdctl(["get", key + ".corrupt-", "--prefix", "--keys-only"])
        }
        #expect(backups.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    @Test func concurrentEditsAreAllAppliedAndAThrowingOneWritesNothing() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await open(cluster, key)
        struct Refused: Error {}
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    if index == 7 {
                        await #expect(throws: Refused.self) {
                            try await store.edit { prefs in
                                prefs[.language] = "xx"
                                throw Refused()
                            }
                        }
                    } else {
                        try await store.edit { $0[.counter] += 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(store[.counter] == 49)
        let replica = try await open(cluster, key, replica: true)
        #expect(replica[.counter] == 49)
        #expect(replica[.language] == "en")
    }

    @Test func twoReplicasIncrementingAtOnceLoseNothing() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let replicas = [
            try await open(cluster, key, replica: true),
            try await open(cluster, key, replica: true),
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for replica in replicas {
                group.addTask {
                    for _ in 0..<40 { try await replica.edit { $0[.counter] += 1 } }
                }
            }
            try await group.waitForAll()
        }
        let check = try await open(cluster, key, replica: true)
        #expect(check[.counter] == 80)
    }

    @Test func anEditThatChangesNothingWritesNothing() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await open(cluster, key)
        try await store.set(.language, "fr")
        let storage = try cluster.storage(key, sharesState: false)
        let before = try await offPool { try storage.currentRevision() }
        try await store.set(.language, "fr")
        try await store.remove(.darkMode)
        #expect(try await offPool { try storage.currentRevision() } == before)
    }

    @Test func aTypeMismatchReadsTheDefaultAndIsReported() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        try await etcdctlPut(cluster, key, storeFile(#"{ "map_zoom" : "far" }"#))
        let store = try await open(cluster, key)
        #expect(store[.mapZoom] == 14)
        #expect(store.problems.contains { $0.key == "map_zoom" })
        #expect {
            try store.value(for: .mapZoom)
        } throws: { error in
            guard case PreferencesError.typeMismatch(let name, _, _) = error else { return false }
            return name == "map_zoom"
        }
    }

    @Test func aDocumentOverEtcdsRequestLimitIsRefusedBeforeSending() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let store = try await open(cluster, key)
        try await store.set(.language, "fr")
        let huge = String(repeating: "x", count: 1_600_000)
        await #expect {
            try await store.set(.nickname, huge)
        } throws: { error in
            guard case PreferencesError.limitExceeded(let file, let reason) = error else {
                return false
            }
            return file == key && reason.contains("1572864")
        }
        #expect(store[.nickname] == nil)
        #expect(try await etcdctlGet(cluster, key).contains("\"language\" : \"fr\""))
        try await store.set(.counter, 2)
        #expect(store[.counter] == 2)
    }

    @Test func aRecordSharesTheKeyAndKeepsFieldsItDoesNotKnow() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        try await etcdctlPut(cluster, key, storeFile(#"{ "newer_field" : [1, 2], "counter" : 4 }"#))
        let store = try await open(cluster, key)
        let record = store.record(EtcdTestRecord.self)
        #expect(record.value.counter == 4)
        #expect(record.value.label == "unset", "R2: missing fields take init()'s value")
        let updated = try await record.update { $0.counter += 1 }
        #expect(updated.counter == 5)
        let shown = try await etcdctlGet(cluster, key)
        #expect(shown.contains("\"newer_field\""), "R3: unknown keys survive: \(shown)")
        #expect(!shown.contains("\"label\""), "R4: unchanged fields stay absent: \(shown)")
    }

    @Test func replicasOpeningAtOnceRunAMigrationOnce() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        try await etcdctlPut(cluster, key, storeFile(#"{ "zoom" : 12, "counter" : 1 }"#))
        let migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
            VersionedMigration(version: 2, name: "bump") { prefs in prefs[.counter] += 1 },
        ]
        let opened = try await withThrowingTaskGroup(of: PreferencesStore.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await self.open(cluster, key, replica: true, migrations: migrations)
                }
            }
            return try await group.reduce(into: [PreferencesStore]()) { $0.append($1) }
        }
        let check = try await open(cluster, key, replica: true)
        #expect(check[.counter] == 2, "the versioned step ran exactly once")
        #expect(check[.mapZoom] == 12)
        #expect(check.snapshot.version == 2)
        for store in opened { #expect(store[.counter] == 2) }
    }
}

struct EtcdTestRecord: PreferencesRecord {
    var counter = 0
    var label = "unset"
}

/// How a write whose answer was lost is resolved (E4), step by step on a
/// real member: the cases the leader-kill test meets only by chance.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 2))
struct EtcdLostAnswerTests {
    @Test func aWriteThatLandedIsFoundEvenAfterLaterWrites() async throws {
        let cluster = try await SharedEtcd.cluster()
        let storage = try cluster.storage(uniqueKey(), sharesState: false)
        let outcome = try await offPool { () -> String in
            let base = try storage.write(Array("base".utf8), ifRevision: .absent)!
            let mine = try storage.write(Array("mine".utf8), ifRevision: base, writeID: "mine")!
            _ = try storage.write(Array("later".utf8), ifRevision: mine)
            return "\(try storage.outcome(of: "mine", after: base, detail: "test"))"
        }
        #expect(outcome.hasPrefix("landed"))
    }

    @Test func anotherWritersIdenticalDocumentIsNotTakenForOurs() async throws {
        let cluster = try await SharedEtcd.cluster()
        let storage = try cluster.storage(uniqueKey(), sharesState: false)
        let outcome = try await offPool { () -> String in
            let base = try storage.write(Array("base".utf8), ifRevision: .absent)!
            // Another replica computed the same document from the same base and won.
            _ = try storage.write(Array("same".utf8), ifRevision: base, writeID: "theirs")
            return "\(try storage.outcome(of: "ours", after: base, detail: "test"))"
        }
        #expect(outcome == "superseded")
    }

    @Test func aWriteThatNeverArrivedCanBeSentAgain() async throws {
        let cluster = try await SharedEtcd.cluster()
        let storage = try cluster.storage(uniqueKey(), sharesState: false)
        let (unchanged, created) = try await offPool { () -> (String, String) in
            let absent = "\(try storage.outcome(of: "ours", after: .absent, detail: "test"))"
            _ = try storage.write(Array("first".utf8), ifRevision: .absent, writeID: "ours")
            let created = "\(try storage.outcome(of: "ours", after: .absent, detail: "test"))"
            return (absent, created)
        }
        #expect(unchanged == "notApplied")
        #expect(created.hasPrefix("landed"))
    }
}

extension EtcdStoreTests {
    @Test func withLiveReadsOffEndingTheLastSubscriptionStopsTheWatch() async throws {
        let cluster = try await SharedEtcd.cluster()
        let store = try await open(cluster, uniqueKey(), liveReads: false)
        let storage = try #require(store.storage as? EtcdStorage)
        let feeds = (0..<3).map { _ in FeedRecorder(store.changes(.counter)) }
        for feed in feeds { #expect(await feed.next(0) == 0) }
        #expect(storage.activeWatchCount == 1, "one watch per store, however many subscribers")
        for feed in feeds { await feed.cancel() }
        #expect(!store.core.isWatching)
        #expect(storage.activeWatchCount == 0)
    }
}

extension EtcdStoreTests {
    @Test func withLiveReadsAnotherReplicasWriteReachesReadsWithNoFeed() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey()
        let reader = try await open(cluster, key, replica: true)
        let writer = try await open(cluster, key, replica: true)
        try await writer.set(.counter, 42)
        #expect(
            await eventually { reader[.counter] == 42 },
            "a read never saw the other replica's write without reload()")
    }
}
