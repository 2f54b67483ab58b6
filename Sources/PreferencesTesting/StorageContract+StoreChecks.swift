import Preferences
import Testing

/// The store's rules that depend on its backend, checked through
/// `PreferencesStore` opened on the backend. What a store wrote is always
/// read back from the backend's bytes, decoded on their own — never from
/// the store's memory, which another handle in the process shares.
extension StorageContract {
    static let storeChecks: [Check] = [
        Check(
            "S1, S2: a store's writes are in the backend's document when they return",
            storeWritesReachTheBackend),
        Check(
            "S3, S4: two stores, one per handle, lose no increment", storesIncrementExactly),
        Check("S5: an edit that changes nothing writes nothing", unchangedEditWritesNothing),
        Check(
            "S8: a corrupt document fails an open under .fail and is kept under .backupAndReset",
            corruptDocumentUnderEachPolicy),
        Check(
            "C1, C3, S16: another writer's document reaches reads and the change feed",
            anotherWriterReachesReadsAndFeeds),
        Check("R3: a record's update keeps stored keys it does not know", recordKeepsUnknownKeys),
        Check("M1, M2: a migration runs once and stores its version", migrationRunsOnce),
        Check(
            "S11: a store edit over the backend's size limit fails and writes nothing",
            oversizedEditWritesNothing),
    ]

    static let counter = PreferenceKey<Int>("contract_counter", default: 0)
    static let note = PreferenceKey<String>("contract_note", default: "")

    /// The backend's document, decoded on its own (an empty document when
    /// the backend holds nothing).
    static func document(in storage: any PreferencesStorage, _ contract: StorageContract)
        async throws -> PreferencesSnapshot
    {
        let bytes = try await contract.call("read") { try storage.read() }.bytes
        let copy = InMemoryStorage(name: "\(storage.location) (read back)", bytes: bytes)
        return try await PreferencesStore(storage: copy, liveReads: false).snapshot
    }

    /// A valid document holding `values`, as another program would write it.
    static func documentBytes(_ values: [String: PreferenceValue], version: Int = 0) -> [UInt8] {
        let root: PreferenceValue = [
            "format": 1, "version": .int(Int64(version)), "values": .object(values),
        ]
        return Array(root.jsonText.utf8)
    }

    static func storeWritesReachTheBackend(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let store = try await PreferencesStore(storage: subject.storage, liveReads: false)
        try await store.set(counter, 7)
        try await store.set(note, "written")
        #expect(store[counter] == 7, "a store does not read its own write")
        var stored = try await document(in: subject.otherHandle, contract)
        #expect(stored[counter] == 7, "a set is not in the backend's document when it returns")
        #expect(stored[note] == "written", "a set is not in the backend's document when it returns")
        try await store.remove(note)
        stored = try await document(in: subject.otherHandle, contract)
        #expect(!stored.contains(note.name), "a remove is not in the backend's document")
    }

    static func storesIncrementExactly(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let rounds = 25
        let stores = [
            try await PreferencesStore(storage: subject.storage, liveReads: false),
            try await PreferencesStore(storage: subject.otherHandle, liveReads: false),
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                for _ in 0..<rounds {
                    group.addTask { try await store.edit { $0[counter] += 1 } }
                }
            }
            try await group.waitForAll()
        }
        let stored = try await document(in: subject.storage, contract)
        #expect(
            stored[counter] == rounds * stores.count,
            "two stores' \(rounds) increments each ended at \(stored[counter])")
    }

    static func unchangedEditWritesNothing(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let storage = subject.storage
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        try await store.set(counter, 1)
        let before = try await contract.call("currentRevision") { try storage.currentRevision() }
        try await store.set(counter, 1)
        try await store.edit { prefs in
            prefs[counter] = 2
            prefs[counter] = 1
        }
        let after = try await contract.call("currentRevision") { try storage.currentRevision() }
        #expect(after == before, "an edit that changed nothing moved the revision")
    }

    static func corruptDocumentUnderEachPolicy(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let storage = subject.storage
        let garbage = Array("{ this is not a preferences document".utf8)
        _ = try await contract.call("write a corrupt document") {
            try storage.write(garbage, ifRevision: .absent)
        }
        do {
            _ = try await PreferencesStore(storage: storage, corruption: .fail, liveReads: false)
            Issue.record("a corrupt document opened under .fail")
        } catch PreferencesError.corrupted {
        } catch {
            Issue.record("a corrupt document under .fail threw \(error), not .corrupted")
        }
        let untouched = try await contract.call("read") { try storage.read() }.bytes
        #expect(untouched == garbage, "an open under .fail changed the corrupt document")

        let store = try await PreferencesStore(
            storage: subject.otherHandle, corruption: .backupAndReset, liveReads: false)
        #expect(store.snapshot.values.isEmpty, "a reset store is not empty")
        let moved = store.problems.compactMap { problem -> String? in
            guard let range = problem.message.firstRange(of: "moved to ") else { return nil }
            return String(problem.message[range.upperBound...])
        }
        let place = try #require(moved.first, "no problem says where the corrupt document went")
        let kept = try await contract.call("read the set-aside bytes") {
            try subject.readSetAside(place)
        }
        #expect(kept == garbage, "the corrupt document's bytes are not kept at \(place)")
    }

    static func anotherWriterReachesReadsAndFeeds(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        let (storage, other) = (subject.storage, subject.otherHandle)
        let store = try await PreferencesStore(storage: storage)
        try await store.set(counter, 1)
        let write: @Sendable (Int) async throws -> Void = { value in
            _ = try await contract.call("write by another handle") {
                try other.write(
                    documentBytes(["contract_counter": .int(Int64(value))]),
                    ifRevision: other.read().revision)
            }
        }
        guard subject.watches else {
            try await write(5)
            try await store.reload()
            #expect(store[counter] == 5, "reload() did not read another handle's write")
            return
        }
        let feed = store.changes(counter)
        let delivered = try await contract.waitFor("the feed's current value, then 5 and 6") {
            var values: [Int] = []
            for await value in feed {
                values.append(value)
                if value == 1 { try await write(5) }
                if value == 5 { try await write(6) }
                if value == 6 { break }
            }
            return values
        }
        #expect(delivered.first == 1, "a feed did not start with the current value")
        #expect(delivered.last == 6, "a feed did not end on the latest value: \(delivered)")
        #expect(store[counter] == 6, "a read after the feed's delivery shows \(store[counter])")
    }

    /// A record that knows one of the keys the check stores.
    struct ContractRecord: PreferencesRecord {
        var counter = 0
        enum CodingKeys: String, CodingKey { case counter = "contract_counter" }
    }

    static func recordKeepsUnknownKeys(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        _ = try await contract.call("write a document from a newer program") {
            try subject.storage.write(
                documentBytes(["contract_counter": 1, "contract_future": "kept"]),
                ifRevision: .absent)
        }
        let store = try await PreferencesStore(storage: subject.storage, liveReads: false)
        let record = store.record(ContractRecord.self)
        #expect(record.value.counter == 1, "a record does not read its stored field")
        try await record.update { $0.counter = 2 }
        let stored = try await document(in: subject.otherHandle, contract)
        #expect(stored[counter] == 2, "a record's update is not in the backend's document")
        #expect(
            stored.value(forKey: "contract_future") == "kept",
            "a record's update dropped a key it does not know")
    }

    static func migrationRunsOnce(_ subject: Subject, _ contract: StorageContract) async throws {
        let runs = Locked(0)
        let migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1) { prefs in
                runs.withLock { $0 += 1 }
                prefs[raw: "contract_migrated"] = true
            }
        ]
        do {
            let store = try await PreferencesStore(
                storage: subject.storage, migrations: migrations, liveReads: false)
            #expect(store.snapshot.version == 1, "a migrated store's version is not 1")
        }
        let stored = try await document(in: subject.otherHandle, contract)
        #expect(stored.version == 1, "the migration's version is not in the backend's document")
        #expect(
            stored.value(forKey: "contract_migrated") == true,
            "the migration's change is not in the backend's document")
        _ = try await PreferencesStore(
            storage: subject.otherHandle, migrations: migrations, liveReads: false)
        #expect(runs.value == 1, "a migration ran \(runs.value) times over two opens")
    }

    static func oversizedEditWritesNothing(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        guard let limit = subject.storage.tuning.maxDocumentSize else { return }
        let store = try await PreferencesStore(storage: subject.storage, liveReads: false)
        do {
            try await store.set(note, String(repeating: "x", count: limit + 1))
            Issue.record("a store edit over maxDocumentSize (\(limit) bytes) was written")
        } catch PreferencesError.limitExceeded {
        } catch {
            Issue.record(
                "a store edit over maxDocumentSize failed with \(error), not .limitExceeded")
        }
        let contents = try await contract.call("read") { try subject.storage.read() }
        #expect(contents.bytes == nil, "a refused oversized edit left a document")
    }
}
