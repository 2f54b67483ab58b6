import Preferences
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The rules of each capability a backend offers — its opening, history
/// archive, manifests, replicas and privacy — checked by calling the
/// capability directly. The backend offers exactly what its subject
/// declares, through both handles; the check of a capability it neither
/// declares nor offers has nothing to check.
extension StorageContract {
    static let capabilityChecks: [Check] = [
        Check(
            "S12: the backend offers the capabilities its subject declares, and no others",
            capabilitiesAreAsDeclared),
        Check(
            "S9: two handles on the same data open with one identity, or none",
            handlesOpenWithOneIdentity),
        Check(
            "H3: an archive reads back what was appended, oldest first, through another handle",
            archiveReadsBackWhatWasAppended),
        Check("H3: an append of entries already archived changes nothing", archiveSkipsRepeats),
        Check(
            "H3: an archive of another history is moved aside, whole, before an append",
            archiveOfAnotherHistoryIsSetAside),
        Check(
            "H4: an archive keeps its newest entries within its limit and drops older ones",
            archiveStaysNearItsLimit),
        Check(
            "F1: published manifests read back whole, by program and by digest",
            manifestsReadBackWhole),
        Check(
            "F1: a program's newer manifest replaces its older, which stays findable by digest",
            newerManifestReplacesOlder),
        Check(
            "F2: a registration is listed through another handle, updated, and gone once closed",
            registrationsAreListedUpdatedAndClosed),
        Check("F2: the replica watch reports a registration", replicaWatchReportsARegistration),
        Check(
            "A3: keepPrivate says whether the document is readable by others; the next write narrows it",
            privateDocumentIsNarrowedByTheNextWrite),
        Check(
            "A3: a store with a declared secret keeps its document readable by its owner only",
            storeWithASecretKeepsItsDocumentPrivate),
    ]

    static func capabilitiesAreAsDeclared(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        for (name, storage) in [
            ("the backend", subject.storage), ("the other handle", subject.otherHandle),
        ] {
            let offered = Capabilities(of: storage)
            let missing = subject.capabilities.subtracting(offered)
            let undeclared = offered.subtracting(subject.capabilities)
            #expect(missing.isEmpty, "\(name) does not offer what its subject declares: \(missing)")
            #expect(
                undeclared.isEmpty,
                "\(name) offers what its subject does not declare, so its rules would go unchecked if it vanished: \(undeclared)"
            )
        }
    }

    static func handlesOpenWithOneIdentity(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let (storage, other) = (subject.storage, subject.otherHandle)
        let identities = try await contract.call("beginOpening, both handles") {
            let (first, second) = (storage.beginOpening(), other.beginOpening())
            defer {
                first.end()
                second.end()
            }
            return (first.identity, second.identity)
        }
        if let first = identities.0, let second = identities.1 {
            #expect(
                first == second, "two handles on the same data opened as \(first) and \(second)")
        }
    }

    // MARK: History archive

    /// Entries `sequences`, as a store archives them.
    static func archiveEntries(_ sequences: ClosedRange<Int64>, by user: String = "contract")
        -> [(sequence: Int64, text: [UInt8])]
    {
        sequences.map { sequence in
            let entry = HistoryEntry(
                sequence: sequence, date: Date(timeIntervalSince1970: 1_780_000_000),
                user: user, program: "contract", host: "contract",
                changes: ["contract_counter": .init(old: nil, new: .int(sequence))])
            return (sequence, Array(entry.jsonText.utf8))
        }
    }

    /// The sequences of archived `texts`, for messages.
    static func sequences(_ texts: [[UInt8]]) -> [Int64] {
        texts.map { text in
            (try? PreferenceValue(jsonText: String(decoding: text, as: UTF8.self)))
                .flatMap { HistoryEntry(jsonValue: $0)?.sequence } ?? -1
        }
    }

    static func archiveReadsBackWhatWasAppended(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        guard let archive = subject.storage.historyArchive else { return }
        let other = try #require(subject.otherHandle.historyArchive, "the other handle has none")
        let empty = try await contract.call("read, empty") { try archive.read().entries }
        #expect(empty.isEmpty, "an empty archive read \(sequences(empty))")
        let entries = archiveEntries(1...5)
        try await contract.call("append #1–#3, then #4–#5") {
            _ = try archive.append(Array(entries[..<3]), history: "h1", keep: .default)
            _ = try archive.append(Array(entries[3...]), history: "h1", keep: .default)
        }
        let read = try await contract.call("read, other handle") { try other.read() }
        #expect(
            read.entries == entries.map(\.text),
            "an archive of #1–#5 read back \(sequences(read.entries))")
        #expect(read.id == "h1", "an archive appended as history h1 names \(read.id ?? "none")")
    }

    static func archiveSkipsRepeats(_ subject: Subject, _ contract: StorageContract) async throws {
        guard let archive = subject.storage.historyArchive else { return }
        let entries = archiveEntries(1...4)
        try await contract.call("append #1–#3, #2–#4, then #1–#3 again") {
            _ = try archive.append(Array(entries[0...2]), history: "h1", keep: .default)
            _ = try archive.append(Array(entries[1...3]), history: "h1", keep: .default)
            _ = try archive.append(Array(entries[0...2]), history: "h1", keep: .default)
        }
        let read = try await contract.call("read") { try archive.read().entries }
        #expect(
            read == entries.map(\.text), "repeated appends of #1–#4 read back \(sequences(read))")
    }

    /// 400 entries appended eight at a time under a limit of 16: the
    /// newest 16 are kept, and the archive holds at most 100 (the file
    /// backend's slack is 64 entries).
    static func archiveStaysNearItsLimit(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        guard let archive = subject.storage.historyArchive else { return }
        let keep = HistoryLimit(entries: 16, bytes: 1 << 20)
        let entries = archiveEntries(1...400)
        try await contract.call("append #1–#400, eight at a time") {
            for start in stride(from: 0, to: entries.count, by: 8) {
                _ = try archive.append(
                    Array(entries[start..<start + 8]), history: "h1", keep: keep)
            }
        }
        let read = try await contract.call("read") { try archive.read().entries }
        #expect(
            read.suffix(16) == entries.suffix(16).map(\.text),
            "an archive limited to 16 entries lost one of the newest 16: it ends \(sequences(read.suffix(16)))"
        )
        #expect(read.count <= 100, "an archive limited to 16 entries holds \(read.count) of 400")
    }

    /// #1–#20 of one history archived, then #1–#3 of another (the
    /// document made again): the first is moved aside whole, the archive
    /// holds the second's alone, and appending more of it moves nothing.
    static func archiveOfAnotherHistoryIsSetAside(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        guard let archive = subject.storage.historyArchive else { return }
        let earlier = archiveEntries(1...20, by: "earlier")
        let later = archiveEntries(1...5, by: "later")
        let (kept, place, again) = try await contract.call("append #1–#20, then another #1–#5") {
            let kept = try archive.append(earlier, history: "h1", keep: .default)
            let place = try archive.append(Array(later[..<3]), history: "h2", keep: .default)
            let again = try archive.append(Array(later[3...]), history: "h2", keep: .default)
            return (kept, place, again)
        }
        #expect(kept == nil, "a first append moved something aside, to \(kept ?? "")")
        #expect(place != nil, "an archive of another history was not moved aside")
        #expect(again == nil, "a second append of the same history moved it aside again")
        let read = try await contract.call("read") { try archive.read() }
        #expect(
            read.entries == later.map(\.text) && read.id == "h2",
            "after another history's #1–#5, the archive names \(read.id ?? "none") and holds \(sequences(read.entries)) of \(read.entries.count)"
        )
    }

    // MARK: Manifests

    /// A manifest of `count` keys, each with a help text, as a program publishes it.
    static func manifestBytes(keys count: Int, default value: Int64 = 0) -> [UInt8] {
        var entries: [String: PreferencesManifest.Entry] = [:]
        for index in 0..<count {
            entries["contract_key_\(index)"] = .init(
                type: .int, defaultValue: .int(value), help: "contract key number \(index)")
        }
        return Array(PreferencesManifest(entries: entries).jsonText.utf8)
    }

    static func manifestsReadBackWhole(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        guard let manifests = subject.storage.manifests else { return }
        let other = try #require(subject.otherHandle.manifests, "the other handle has none")
        let (small, large) = (manifestBytes(keys: 2), manifestBytes(keys: 2000))
        let none = try await contract.call("read manifests, none published") {
            (try other.programManifests(), try other.storeManifest()?.bytes)
        }
        #expect(none.0.isEmpty, "a backend with nothing published read \(none.0.keys.sorted())")
        #expect(none.1 == nil, "a backend with nothing published read a store manifest")
        try await contract.call("publish two programs' manifests") {
            try manifests.publish(small, program: "contract-small")
            try manifests.publish(large, program: "contract-large")
        }
        let read = try await contract.call("read manifests, other handle") {
            (
                try other.programManifests(),
                try other.manifest(digest: PreferencesManifest.digest(of: small)),
                try other.manifest(digest: PreferencesManifest.digest(of: large)),
                try other.storeManifest()?.bytes
            )
        }
        #expect(
            read.0 == ["contract-small": small, "contract-large": large],
            "two programs' manifests read back as \(read.0.mapValues(\.count)) (program: bytes)")
        #expect(read.1 == small, "a manifest is not found by its digest")
        #expect(read.2 == large, "a manifest of \(large.count) bytes is not found whole by digest")
        #expect(
            read.3 == nil || read.3 == large, "the store manifest is not the last one published")
        let unknown = try await contract.call("manifest of an unknown digest") {
            try other.manifest(digest: "0123456789abcdef")
        }
        #expect(unknown == nil, "a digest nobody published found a manifest")
    }

    static func newerManifestReplacesOlder(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        guard let manifests = subject.storage.manifests else { return }
        let (older, newer) = (manifestBytes(keys: 3), manifestBytes(keys: 3, default: 1))
        let read = try await contract.call("publish a program's manifest, then a newer one") {
            try manifests.publish(older, program: "contract")
            try manifests.publish(newer, program: "contract")
            try manifests.publish(newer, program: "contract")
            return (
                try manifests.programManifests(),
                try manifests.manifest(digest: PreferencesManifest.digest(of: older)),
                try manifests.manifest(digest: PreferencesManifest.digest(of: newer))
            )
        }
        #expect(read.0 == ["contract": newer], "a newer manifest did not replace the program's")
        #expect(read.1 == older, "a program's older manifest is no longer found by its digest")
        #expect(read.2 == newer, "a program's newer manifest is not found by its digest")
    }

    // MARK: Replicas

    /// A replica of this check, `contract-host/pid`.
    static func replica(pid: Int32, applied: Int64 = 0) -> PreferencesReplica {
        PreferencesReplica(
            host: "contract-host", pid: pid, program: "contract", manifest: "",
            since: Date(timeIntervalSince1970: 1_780_000_000), applied: applied)
    }

    /// Waits until `registry` lists `expected`: at each report of its watch,
    /// or every 10 ms when it has none.
    static func awaitListing(
        _ expected: [PreferencesReplica], in registry: any ReplicaRegistry, _ what: String,
        _ contract: StorageContract
    ) async throws {
        let events = EventLog()
        let watch = try await contract.call("watch the registrations") {
            try registry.watch { events.record(.changed(nil)) }
        }
        defer { watch?.cancel() }
        try await contract.waitFor(what) {
            var seen = 0
            while try await contract.call("list", { try registry.list() }) != expected {
                if watch == nil {
                    try await Task.sleep(for: .milliseconds(10))
                } else {
                    seen = try await events.next(after: seen)
                }
            }
        }
    }

    static func registrationsAreListedUpdatedAndClosed(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        guard let registry = subject.storage.replicas else { return }
        let other = try #require(subject.otherHandle.replicas, "the other handle has none")
        let none = try await contract.call("list, none registered") { try other.list() }
        #expect(none.isEmpty, "a backend with nobody registered lists \(none.map(\.name))")
        let (first, second) = (replica(pid: 910_002), replica(pid: 910_001))
        let registrations = try await contract.call("register two replicas") {
            (try registry.register(first), try registry.register(second))
        }
        let one = try #require(registrations.0, "a backend with replicas registered nothing")
        let two = try #require(registrations.1, "a backend with replicas registered nothing")
        defer { two.close() }
        let listed = try await contract.call("list, other handle") { try other.list() }
        #expect(listed == [second, first], "two registrations listed as \(listed)")
        let updated = PreferencesReplica(
            host: first.host, pid: first.pid, program: first.program,
            manifest: "0123456789abcdef", since: first.since, applied: 7)
        try await contract.call("update") { try one.update(updated) }
        let after = try await contract.call("list after the update") { try other.list() }
        #expect(after == [second, updated], "an updated registration lists as \(after)")
        one.close()
        try await awaitListing([second], in: other, "a closed registration to go", contract)
        try await contract.call("update after close") { try one.update(updated) }
        let last = try await contract.call("list after an update after close") { try other.list() }
        #expect(last == [second], "an update after close registered again: \(last)")
    }

    static func replicaWatchReportsARegistration(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        guard let registry = subject.storage.replicas else { return }
        let other = try #require(subject.otherHandle.replicas, "the other handle has none")
        let events = EventLog()
        let started = try await contract.call("watch, other handle") {
            try other.watch { events.record(.changed(nil)) }
        }
        guard let watch = started else { return }
        defer { watch.cancel() }
        let me = replica(pid: 910_003)
        let registration = try await contract.call("register") { try registry.register(me) }
        defer { registration?.close() }
        try await contract.waitFor("the replica watch to report a registration") {
            var seen = 0
            while true {
                seen = try await events.next(after: seen)
                if try await contract.call("list", { try other.list() }) == [me] { return }
            }
        }
    }

    // MARK: Privacy

    static func privateDocumentIsNarrowedByTheNextWrite(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        let storage = subject.storage
        guard let privacy = storage.privacy else { return }
        let written = try await contract.call("keepPrivate, write, keepPrivate") {
            let empty = try privacy.keepPrivate()
            _ = try storage.write(Array("private".utf8), ifRevision: storage.currentRevision())
            return (empty, try privacy.keepPrivate())
        }
        #expect(!written.0, "keepPrivate says an empty backend is readable by others")
        #expect(!written.1, "a document written after keepPrivate is readable by others")
        guard let expose = subject.makeReadableByOthers else { return }
        let exposed = try await contract.call("expose, keepPrivate, write, keepPrivate") {
            try expose()
            let before = try privacy.keepPrivate()
            _ = try storage.write(Array("narrowed".utf8), ifRevision: storage.currentRevision())
            return (before, try privacy.keepPrivate())
        }
        #expect(exposed.0, "keepPrivate says a document readable by others is not")
        #expect(!exposed.1, "the write after keepPrivate left the document readable by others")
    }

    static func storeWithASecretKeepsItsDocumentPrivate(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        guard subject.storage.privacy != nil, let expose = subject.makeReadableByOthers else {
            return
        }
        let token = PreferenceKey<String>("contract_token", default: "", secret: true)
        let store = try await PreferencesStore(
            storage: subject.storage, declaring: [token], liveReads: false)
        try await store.set(note, "written")
        try await contract.call("make the document readable by others") { try expose() }
        try await store.set(token, "s3cr3t")
        #expect(
            store.problems.contains { $0.message.contains("readable by others") },
            "a store that narrowed a document readable by others lists no problem")
        let other = try #require(subject.otherHandle.privacy, "the other handle has none")
        let readable = try await contract.call("keepPrivate, other handle") {
            try other.keepPrivate()
        }
        #expect(!readable, "a store holding a secret left its document readable by others")
    }
}
