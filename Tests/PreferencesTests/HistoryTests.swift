import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Numbered changes and their history (H1–H5): entries, undo, restore, and
/// a feed that resumes. What is "in the file" is read from the file.
@Suite(.scaledTimeLimit(minutes: 10))
struct HistoryTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    func open(history: HistoryLimit = .default) async throws -> PreferencesStore {
        var limits = PreferencesLimits()
        limits.history = history
        return try await PreferencesStore(fileURL: url, limits: limits)
    }

    @Test func everyChangeTakesTheNextSequenceWithItsOldAndNewValues() async throws {
        let store = try await open()
        try await store.set(.counter, 1)
        try await store.set(.counter, 2)
        try await store.remove(.counter)
        try await store.set(.counter, 2)
        try await store.set(.counter, 2)  // unchanged: no change, no number
        #expect(store.snapshot.sequence == 4)
        #expect(try fileSnapshot(url).sequence == 4)
        let entries = try await store.history().entries
        #expect(entries.map(\.sequence) == [1, 2, 3, 4])
        #expect(entries[0].changes == ["counter": .init(old: nil, new: 1)])
        #expect(entries[1].changes == ["counter": .init(old: 1, new: 2)])
        // A removal is a change like any other, with who made it.
        #expect(entries[2].changes == ["counter": .init(old: 2, new: nil)])
        #expect(entries[2].user == effectiveUserName())
        #expect(entries[2].program == ProcessInfo.processInfo.processName)
        #expect(entries[2].host == Platform.hostName && !entries[2].host.isEmpty)
        #expect(entries[3].changes == ["counter": .init(old: nil, new: 2)])
    }

    @Test func aGroupCommitIsOneChangeAndAClearNamesEveryKey() async throws {
        let store = try await open()
        try await store.edit { prefs in
            prefs[.darkMode] = true
            prefs[.language] = "fr"
        }
        try await store.clear()
        let entries = try await store.history().entries
        #expect(entries.map(\.sequence) == [1, 2])
        #expect(entries[0].keys == ["dark_mode", "language"])
        #expect(
            entries[1].changes == [
                "dark_mode": .init(old: true, new: nil), "language": .init(old: "fr", new: nil),
            ])
    }

    @Test func theEntryLineIsTheDocumentedJSON() throws {
        let entry = HistoryEntry(
            sequence: 412, date: Date(timeIntervalSince1970: 1_764_645_129.12), user: "root",
            sudoUser: "alice", program: "prefs", host: "web-1",
            changes: [
                "max_connections": .init(old: 100, new: 1000), "motd": .init(old: "hi", new: nil),
            ])
        #expect(
            entry.jsonText
                == #"{"sequence":412,"at":"2025-12-02T03:12:09.120Z","by":"root","sudo_user":"alice","program":"prefs","host":"web-1","changes":{"max_connections":{"old":100,"new":1000},"motd":{"old":"hi"}}}"#
        )
        #expect(HistoryEntry(jsonText: Array(entry.jsonText.utf8), source: "") == entry)
        #expect(
            entry.description
                == "#412 2025-12-02T03:12:09.120Z root (sudo from alice) via prefs: max_connections 100 → 1000, motd \"hi\" → (unset)"
        )
    }

    @Test func migrationStepsAndImportsNameThemselves() async throws {
        try write("ui.theme=dark\n", to: directory.file("old.properties"))
        let migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1, name: "seed") { $0[raw: "seeded"] = true },
            LegacyImport(.properties, at: directory.file("old.properties")),
            VersionedMigration(version: 2, name: "noop") { _ in },
        ]
        let store = try await PreferencesStore(fileURL: url, migrations: migrations)
        let entries = try await store.history().entries
        // The step that changes nothing but the version is a change too.
        #expect(entries.map(\.sequence) == [1, 2, 3])
        #expect(entries[0].cause == "migration: seed")
        #expect(entries[0].versionChange?.new == 1)
        #expect(entries[1].cause?.hasPrefix("migration: import properties ") == true)
        #expect(entries[1].changes["ui.theme"]?.new == "dark")
        #expect(entries[2].cause == "migration: noop")
        #expect(entries[2].changes.isEmpty && entries[2].versionChange?.old == 1)
    }

    @Test func revertPutsBackTheOldValuesAsANewChange() async throws {
        let store = try await open()
        try await store.set(.counter, 100)
        try await store.edit { prefs in
            prefs[.counter] = 1000
            prefs[.language] = "fr"
        }
        let sequence = try await store.revert(2)
        #expect(sequence == 3)
        #expect(store[.counter] == 100 && store[.language] == "en")
        let inFile = try fileSnapshot(url)
        #expect(inFile.values == ["counter": 100])
        let last = try #require(try await store.history().entries.last)
        #expect(last.sequence == 3 && last.cause == "revert #2")
        #expect(last.changes["language"] == .init(old: "fr", new: nil))
        // Reverting again changes nothing: the keys already hold those values.
        #expect(try await store.revert(2, force: true) == nil)
        #expect(store.snapshot.sequence == 3)
    }

    @Test func revertRefusesWhenAKeyChangedSinceAndForceOverrides() async throws {
        let store = try await open()
        try await store.set(.counter, 1)
        try await store.edit { prefs in
            prefs[.counter] = 2
            prefs[.language] = "fr"
        }
        try await store.set(.counter, 3)
        let before = try Data(contentsOf: url)
        await #expect(
            throws: PreferencesError.conflict(
                keys: ["counter"],
                reason: "change #2 cannot be reverted: these keys changed since")
        ) {
            try await store.revert(2)
        }
        #expect(try Data(contentsOf: url) == before, "a refused revert wrote")
        #expect(try await store.revert(2, force: true) == 4)
        #expect(try fileSnapshot(url).values == ["counter": 1])
    }

    @Test func revertOfAChangeTheHistoryNoLongerHoldsNamesTheOldestKept() async throws {
        let store = try await open(history: HistoryLimit(entries: 3))
        for value in 1...6 { try await store.set(.counter, value) }
        await #expect(throws: PreferencesError.historyUnavailable(sequence: 2, oldestKept: 4)) {
            try await store.revert(2)
        }
        // A change not made yet is not a history that was lost.
        await #expect(throws: PreferencesError.changeNotMade(sequence: 9, lastMade: 6)) {
            try await store.revert(9)
        }
        await #expect(throws: PreferencesError.changeNotMade(sequence: 9, lastMade: 6)) {
            try await store.restore(to: 9)
        }
    }

    @Test func restoreGoesBackToAnyKeptStateAndForwardAgain() async throws {
        let url = self.url
        try await runRestoreScenario(
            try await open(),
            stored: {
                let inFile = try fileSnapshot(url)
                return (inFile.sequence, inFile.values)
            },
            reopen: { try await PreferencesStore(fileURL: url, liveReads: false) })
    }

    @Test func restoreToATimeUsesTheLastChangeMadeBeforeIt() async throws {
        let store = try await open()
        try await store.set(.counter, 1)
        try await store.set(.counter, 2)
        let second = try #require(try await store.history().entries.last)
        // Times are kept to the millisecond: #3 comes a millisecond later at
        // least, so that #2's time names #2 alone.
        #expect(
            await eventually { Date() > second.date.addingTimeInterval(0.002) },
            "the clock to pass #2's millisecond")
        try await store.set(.counter, 3)
        let third = try #require(try await store.history().entries.last)
        try #require(third.sequence == 3 && third.date > second.date, "\(third)")
        #expect(try await store.sequence(at: second.date) == 2)
        #expect(try await store.sequence(at: third.date.addingTimeInterval(-0.001)) == 2)
        #expect(try await store.sequence(at: third.date) == 3)
        #expect(try await store.sequence(at: Date(timeIntervalSince1970: 0)) == 0)
        try await store.restore(to: Date(timeIntervalSince1970: 0))
        #expect(try fileSnapshot(url).values.isEmpty)
    }

    @Test func theHistoryIsBoundedByEntriesAndBytes() async throws {
        let store = try await open(history: HistoryLimit(entries: 50, bytes: 1 << 20))
        for value in 1...200 { try await store.set(.counter, value) }
        let kept = try await store.history()
        #expect(kept.entries.map(\.sequence) == Array(151...200))
        #expect(kept.oldestKept == 151 && kept.latest == 200)
        let byBytes = try await PreferencesStore(
            storage: InMemoryStorage(),
            limits: {
                var limits = PreferencesLimits();
                limits.history = HistoryLimit(entries: 1000, bytes: 2000); return limits
            }())
        for value in 1...100 { try await byBytes.set(.counter, value) }
        let small = try await byBytes.history()
        #expect(small.entries.reduce(0) { $0 + $1.jsonText.utf8.count } <= 2000)
        #expect(small.entries.last?.sequence == 100 && small.entries.count > 5)
    }

    /// H4 (<doc:HistoryAndUndo>): programs sharing a store with different
    /// limits keep the largest any of them asked for, which the document
    /// records as `history_keep`.
    /// The first program keeps 100 entries and writes #1–#150; a second,
    /// opened after it has gone, asks for 5 entries or none and writes
    /// #151–#200. The last 100 changes are still kept, #151–#200 with
    /// entries of their own: read from the files' bytes and by `prefs log`
    /// in a process of its own.
    @Test(arguments: [HistoryLimit(entries: 5), .off])
    func aProgramWithASmallerLimitNeverDropsWhatALargerOneKeeps(smaller: HistoryLimit)
        async throws
    {
        let larger = HistoryLimit(entries: 100, bytes: 1 << 20)
        weak var firstCore: StoreCore?
        do {
            let first = try await open(history: larger)
            firstCore = first.core
            for value in 1...150 { try await first.set(.counter, value) }
        }
        // Stores on one file in one process share its state (S9) and the
        // first opening's limits: the second opens once the first has gone.
        #expect(await eventually(seconds: 30) { firstCore == nil }, "the first store to close")
        let second = try await open(history: smaller)
        try #require(second.core.limits.history == smaller, "the second's own limit")
        for value in 151...200 { try await second.set(.counter, value) }

        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        #expect(document["sequence"] as? Int == 200)
        let keep = try #require(document["history_keep"] as? [String: Any], "\(document)")
        #expect(keep["entries"] as? Int == 100 && keep["bytes"] as? Int == 1 << 20, "\(keep)")
        // Each entry is in the document, in the archive beside it, or in both.
        let carried = document["history"] as? [[String: Any]] ?? []
        let archived = (contents(directory.file("prefs.json.history")) ?? "")
            .split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        let inFiles = Self.newCounters(carried + archived)
        let missing = (101...200).filter { inFiles[$0] != $0 }
        #expect(missing.isEmpty, "entries missing from the files: \(missing)")

        let log = try await runChild("prefs", ["--file", url.path, "log", "--json"])
        #expect(log.status == 0, "\(log.standardError)")
        let logged = log.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let listed = logged.compactMap { $0["sequence"] as? Int }
        #expect(listed.first == 200 && listed == listed.sorted(by: >), "newest first")
        let unlisted = (101...200).filter { !listed.contains($0) }
        #expect(unlisted.isEmpty, "not listed by prefs log: \(unlisted)")
        let inLog = Self.newCounters(logged)
        #expect((101...200).allSatisfy { inLog[$0] == $0 }, "counter's new value in each entry")
    }

    /// The same with the second program in a process of its own: a first
    /// that keeps 1,100 entries writes #1–#1050, then `prefs`, which asks
    /// for the default 1,000, writes #1051–#1060. The first's limit still
    /// keeps all of them: none of the oldest 60 is dropped.
    @Test func prefsWithTheDefaultLimitKeepsTheEntriesALargerLimitKeeps() async throws {
        let larger = HistoryLimit(entries: 1100, bytes: 4 << 20)
        do {
            let first = try await open(history: larger)
            for value in 1...1050 { try await first.set(.counter, value) }
        }
        for value in 1051...1060 {
            let set = try await runChild(
                "prefs", ["--file", url.path, "set", "counter", String(value)])
            try #require(set.status == 0, "\(set.standardError)")
        }
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let keep = try #require(document["history_keep"] as? [String: Any], "\(document)")
        #expect(keep["entries"] as? Int == 1100 && keep["bytes"] as? Int == 4 << 20, "\(keep)")
        let log = try await runChild("prefs", ["--file", url.path, "log", "--json"])
        #expect(log.status == 0, "\(log.standardError)")
        let logged = log.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let listed = logged.compactMap { $0["sequence"] as? Int }
        #expect(
            listed == Array((1...1060).reversed()),
            "\(listed.count) listed, the oldest #\(listed.last ?? 0)")
        let inLog = Self.newCounters(logged)
        #expect((1...1060).allSatisfy { inLog[$0] == $0 }, "counter's new value in each entry")
    }

    /// The new value of `counter` each entry (as its JSON object) sets, by
    /// sequence.
    static func newCounters(_ entries: [[String: Any]]) -> [Int: Int] {
        var counters: [Int: Int] = [:]
        for entry in entries {
            guard let sequence = entry["sequence"] as? Int,
                let changes = entry["changes"] as? [String: Any],
                let counter = changes["counter"] as? [String: Any]
            else { continue }
            counters[sequence] = counter["new"] as? Int
        }
        return counters
    }

    @Test func entriesMoveToTheArchiveAndEveryOneIsStillRead() async throws {
        let store = try await open()
        for value in 1...100 { try await store.set(.counter, value) }
        let archive = directory.file("prefs.json.history")
        let lines = try #require(contents(archive)).split(separator: "\n")
        #expect(lines.count >= 64 && lines.count < 100, "\(lines.count) archived")
        // The document carries only the newest few.
        #expect(
            try fileSnapshot(url).document.history.entries.count <= StoreCore.documentHistoryEntries
        )
        let entries = try await store.history().entries
        #expect(entries.map(\.sequence) == Array(1...100))
        for entry in entries {
            #expect(entry.changes["counter"]?.new == .int(entry.sequence))
        }
    }

    /// H3: a change and its entry are one write. The write of change #17
    /// is the one that first moves #1–#16 to the archive; it fails right
    /// after the archive took them. No entry of the failed change is
    /// anywhere, and the next change is #17 with its own entry, once.
    @Test func aWriteThatFailsAfterTheArchiveAppendLeavesNoEntryWithoutItsChange() async throws {
        let storage = FailingAfterArchiveStorage(FileStorage(fileURL: url))
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        for value in 1...16 { try await store.set(.counter, value) }
        #expect(storage.failures.value == 0, "a write failed before #17")
        await #expect(
            throws: PreferencesError.io(
                operation: "write", path: url.path, code: EIO,
                message: "injected after the archive")
        ) { try await store.set(.counter, 999) }
        #expect(storage.failures.value == 1)
        #expect(store[.counter] == 16 && store.snapshot.sequence == 16)
        #expect(try fileSnapshot(url).sequence == 16)
        for value in 17...20 { try await store.set(.counter, value) }

        // Every entry on disk, in the document and in the archive, is one
        // of a change the document holds: #1–#20, each setting its number.
        let archived = (contents(directory.file("prefs.json.history")) ?? "")
            .split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        #expect(archived.compactMap { $0["sequence"] as? Int } == Array(1...16))
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let carried = document["history"] as? [[String: Any]] ?? []
        #expect(carried.compactMap { $0["sequence"] as? Int } == Array(17...20))
        #expect(document["sequence"] as? Int == 20)
        let onDisk = Self.newCounters(archived + carried)
        #expect(onDisk == Dictionary(uniqueKeysWithValues: (1...20).map { ($0, $0) }), "\(onDisk)")
        // As another process reads it.
        let log = try await runChild("prefs", ["--file", url.path, "log", "--json"])
        #expect(log.status == 0, "\(log.standardError)")
        let logged = log.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(logged.compactMap { $0["sequence"] as? Int } == Array((1...20).reversed()))
        #expect(Self.newCounters(logged) == onDisk)
    }

    /// H4 on disk: `prefs.json.history` itself is rewritten with its newest
    /// entries once it grows past the limit and its slack (a quarter, at
    /// least 64 entries). With a limit of 10, 200 changes move #1–#192 to
    /// the archive, 16 at a time; it is rewritten to 10 entries when it
    /// would hold 80 (#71–#80) and 90 (#151–#160), then takes #161–#192.
    @Test func theArchiveFileIsTrimmedToItsLimitOnDisk() async throws {
        let store = try await open(history: HistoryLimit(entries: 10))
        for value in 1...200 { try await store.set(.counter, value) }
        let archive = try #require(contents(directory.file("prefs.json.history")))
        let lines = archive.split(separator: "\n")
        let sequences = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?[
                "sequence"] as? Int
        }
        // The first line names the history; every other line is an entry.
        #expect(lines.first?.hasPrefix(#"{"history_id":"#) == true, "\(lines.first ?? "")")
        #expect(lines.count == sequences.count + 1, "lines that are not entries")
        #expect(sequences == Array(151...192), "\(lines.count) lines")
        #expect(try await store.history().entries.map(\.sequence) == Array(191...200))
    }

    @Test func aTornArchiveLineIsSkippedThenCutOff() async throws {
        let store = try await open()
        for value in 1...40 { try await store.set(.counter, value) }
        let archive = directory.file("prefs.json.history")
        let handle = try FileHandle(forWritingTo: archive)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"sequence":999,"at":"2026-"#.utf8))
        try handle.close()
        #expect(try await store.history().entries.map(\.sequence) == Array(1...40))
        for value in 41...80 { try await store.set(.counter, value) }
        #expect(try await store.history().entries.map(\.sequence) == Array(1...80))
        let text = try #require(contents(archive))
        // The torn line is gone (a time can hold "999": look for its start).
        #expect(!text.contains(#"{"sequence":999,"#) && text.hasSuffix("\n"))
    }

    @Test func aLargeValueIsKeptByItsSizeAndItsChangeCannotBeReverted() async throws {
        let store = try await open()
        let large = String(repeating: "x", count: HistoryEntry.maxKeptValueBytes + 1)
        try await store.set(.language, "fr")
        try await store.set(.language, large)
        try await store.set(.language, "de")
        let entries = try await store.history().entries
        let change = try #require(entries[1].changes["language"])
        #expect(change.old == "fr" && change.new == nil)
        #expect(change.newSize == large.utf8.count + 2)
        #expect(
            entries[1].description.hasSuffix("language \"fr\" → (\(large.utf8.count + 2) bytes)"))
        #expect(HistoryEntry(jsonText: Array(entries[1].jsonText.utf8), source: "") == entries[1])
        // Undoing #3 would need the large value back.
        await #expect(
            throws: PreferencesError.conflict(
                keys: ["language"],
                reason:
                    "change #3 cannot be reverted: the history keeps only the size of these keys' old values"
            )
        ) { try await store.revert(3) }
        await #expect(
            throws: PreferencesError.conflict(
                keys: ["language"],
                reason:
                    "the state after #2 cannot be restored: the history keeps only the size of these keys' old values"
            )
        ) { try await store.restore(to: 2) }
        #expect(store[.language] == "de")
        // The file is not twice the value's size.
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        #expect(size < 2 * large.utf8.count)
    }

    @Test func theFeedResumesAfterARestartWithNothingMissedOrRepeated() async throws {
        do {
            let store = try await open()
            for value in 1...30 { try await store.set(.counter, value) }
        }
        // A new store on the file, as after a restart; the consumer handled #12.
        let store = try await open()
        var events = store.changes(since: 12).makeAsyncIterator()
        for expected in Int64(13)...30 {
            let event = try await events.next(within: .seconds(20), "change #\(expected)")
            #expect(
                event
                    == .change(
                        try #require(
                            try await store.history().entries.first { $0.sequence == expected })))
        }
        try await store.set(.counter, 31)
        let live = try await events.next(within: .seconds(20), "the live change #31")
        guard case .change(let entry) = live else {
            Issue.record("expected change #31, got \(live)")
            return
        }
        #expect(entry.sequence == 31 && entry.changes["counter"]?.new == 31)
    }

    @Test func theFeedSaysSoWhenTheHistoryNoLongerReachesBack() async throws {
        let store = try await open(history: HistoryLimit(entries: 5))
        for value in 1...20 { try await store.set(.counter, value) }
        var events = store.changes(since: 3).makeAsyncIterator()
        let first = try await events.next(within: .seconds(20), "the gap notice")
        #expect(first == .gap(after: 3, resumesAt: 16))
        for expected in Int64(16)...20 {
            let event = try await events.next(within: .seconds(20), "change #\(expected)")
            guard case .change(let entry) = event else {
                Issue.record("expected change #\(expected), got \(event)")
                return
            }
            #expect(entry.sequence == expected)
        }
    }
}
