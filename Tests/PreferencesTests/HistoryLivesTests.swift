import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// One history per life of a store's file: a file deleted and made again,
/// reset after corruption, or replaced by an older copy numbers its
/// changes anew, and the archive of the earlier life (`prefs.json.history`)
/// is never read or appended to as this one's. It is moved aside whole, and
/// the history says where. What is on disk is read from the files' JSON.
@Suite(.scaledTimeLimit(minutes: 10))
struct HistoryLivesTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    func open(corruption: CorruptionPolicy = .fail) async throws -> PreferencesStore {
        try await PreferencesStore(fileURL: url, corruption: corruption, liveReads: false)
    }

    /// The archive's lines, each parsed as JSON.
    func archiveLines(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try #require(
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
        }
    }

    /// The members of the store's document, parsed as JSON.
    func document() throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// The files beside the store whose names start with `prefs.json.history.`.
    func setAsideArchives() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("prefs.json.history.") }.sorted()
    }

    /// 40 changes of `old_counter`: the archive holds 32 of them.
    func earlierLife() async throws {
        let store = try await open()
        for value in 1...40 {
            try await store.set(PreferenceKey<Int>("old_counter", default: 0), value)
        }
        let archived = try archiveLines(url.path + ".history")
        #expect(archived.compactMap { $0["sequence"] as? Int } == Array(1...32))
    }

    @Test func aFileDeletedAndMadeAgainHasAHistoryOfItsOwn() async throws {
        try await earlierLife()
        try FileManager.default.removeItem(at: url)
        let store = try await open()
        try await store.set(PreferenceKey<Int>("fresh", default: 0), 1)
        for value in 1...40 { try await store.set(.counter, value) }

        let history = try await store.history()
        #expect(history.entries.map(\.sequence) == Array(1...41))
        #expect(history.entries.first?.changes == ["fresh": .init(old: nil, new: 1)])
        let touched = Set(history.entries.flatMap(\.keys))
        #expect(touched == ["fresh", "counter"], "the history shows \(touched)")
        #expect(try await store.history(for: ["fresh"]).entries.map(\.sequence) == [1])
        // Change #20 of this life set counter to 19; its revert puts 18 back.
        try await store.set(.counter, 19)
        try await store.revert(20, force: true)
        #expect(store[.counter] == 18)

        // The earlier life's archive is kept aside, whole, and named.
        let aside = try setAsideArchives()
        try #require(aside.count == 1, "beside the store: \(aside)")
        let kept = try archiveLines(directory.path + "/" + aside[0])
        #expect(kept.compactMap { $0["sequence"] as? Int } == Array(1...32))
        #expect(try await store.history().earlierHistories == [directory.path + "/" + aside[0]])
        // The archive in place is this life's: it names the document's history.
        let id = try #require(try document()["history_id"] as? String)
        let lines = try archiveLines(url.path + ".history")
        #expect(lines.first as? [String: String] == ["history_id": id])
        #expect(
            lines.dropFirst().allSatisfy {
                ($0["changes"] as? [String: Any])?["old_counter"] == nil
            })
    }

    @Test func aResetAfterCorruptionHasAHistoryOfItsOwn() async throws {
        try await earlierLife()
        try Data("{ not json".utf8).write(to: url)
        let store = try await open(corruption: .backupAndReset)
        for value in 1...5 { try await store.set(.counter, value) }
        // Before the new life archives anything, the old archive is still in
        // place: never read as this life's, and named as kept aside.
        var history = try await store.history()
        #expect(history.entries.map(\.sequence) == Array(1...6))
        #expect(history.earlierHistories == [url.path + ".history"])
        for value in 6...30 { try await store.set(.counter, value) }
        history = try await store.history()
        #expect(history.entries.map(\.sequence) == Array(1...31))
        #expect(history.entries.dropFirst().allSatisfy { $0.keys == ["counter"] })
        let aside = try setAsideArchives()
        try #require(aside.count == 1, "beside the store: \(aside)")
        #expect(history.earlierHistories == [directory.path + "/" + aside[0]])
        #expect(try archiveLines(directory.path + "/" + aside[0]).count == 33)
    }

    /// The reset is change #1 of the new history, by this process, saying
    /// where the bad bytes went, with the values it put in their place.
    @Test func aResetAfterCorruptionIsTheFirstChangeOfItsHistory() async throws {
        try Data("{ not json".utf8).write(to: url)
        let store = try await open(corruption: .replace { _ in ["language": "de"] })
        let corrupt = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .first { $0.hasPrefix("prefs.json.corrupt-") })
        let history = try await store.history()
        let reset = try #require(history.entries.first)
        #expect(history.entries.count == 1 && reset.sequence == 1)
        #expect(reset.changes == ["language": .init(old: nil, new: "de")])
        #expect(
            reset.cause
                == "reset after corruption; the file was moved to \(directory.path)/\(corrupt)")
        #expect(reset.program == ProcessInfo.processInfo.processName)
        // In the file, as a new process reads it.
        let written = try document()
        #expect(written["sequence"] as? Int == 1)
        #expect((written["history"] as? [Any])?.count == 1)
        #expect(written["history_id"] is String)
        try await store.set(.counter, 1)
        #expect(try await store.history().entries.map(\.sequence) == [1, 2])
    }

    @Test func aDocumentReplacedByAnOlderCopyNeverShowsTheChangesItUndid() async throws {
        let store = try await open()
        for value in 1...20 { try await store.set(.counter, value) }
        let copy = try Data(contentsOf: url)
        for value in 21...40 { try await store.set(.language, "v\(value)") }
        try copy.write(to: url)

        // The copy's own changes read back; the undone #21–#40 never do.
        let reopened = try await open()
        var history = try await reopened.history()
        #expect(history.entries.map(\.sequence) == Array(1...20))
        #expect(history.entries.allSatisfy { $0.keys == ["counter"] })
        // After each change on the copy, its history runs on from #20 without a gap.
        history = try await setTwentyChangesOnACopy(reopened)
        #expect(history.latest == 40)
        let later = history.entries.filter { $0.sequence > 20 }
        #expect(later.map(\.sequence) == Array(21...40))
        #expect(
            later.map { $0.changes["counter"]?.new } == (101...120).map { .int(Int64($0)) },
            "\(later.map(\.changes))")
        #expect(!history.entries.contains { $0.keys.contains("language") })
        // The life the copy replaced is kept aside whole, its undone changes
        // #21–#32 included; the archive in place keeps only what the copy shares.
        let aside = try setAsideArchives()
        try #require(aside.count == 1, "beside the store: \(aside)")
        #expect(history.earlierHistories == [directory.path + "/" + aside[0]])
        let kept = try archiveLines(directory.path + "/" + aside[0]).dropFirst()
        #expect(kept.compactMap { $0["sequence"] as? Int } == Array(1...32))
        #expect(
            kept.filter { ($0["sequence"] as? Int ?? 0) > 20 }
                .allSatisfy { ($0["changes"] as? [String: Any])?["language"] != nil })
        let inPlace = try archiveLines(url.path + ".history").dropFirst()
        let changed = inPlace.map { ($0["changes"] as? [String: Any])?.keys.sorted() ?? [] }
        #expect(inPlace.first?["sequence"] as? Int == 1)
        #expect(changed.allSatisfy { $0 == ["counter"] }, "\(changed)")
        // A change the copy shares can still be undone: #5 set the counter 4 → 5.
        try await reopened.revert(5, force: true)
        #expect(reopened[.counter] == 4)
    }

    /// An archive written before archives named their history has no first
    /// line naming one; it stays this store's as long as it agrees with the
    /// document, and a rewrite names it.
    @Test func anArchiveWithoutAHistoryNameStaysTheStoresWhileItAgrees() async throws {
        var store: PreferencesStore? = try await open()
        for value in 1...40 { try await store!.set(.counter, value) }
        store = nil
        // Both as an earlier version wrote them: no names.
        let archivePath = url.path + ".history"
        let lines = try String(contentsOfFile: archivePath, encoding: .utf8)
            .split(separator: "\n").dropFirst()
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: archivePath, atomically: true, encoding: .utf8)
        var members = try document()
        members["history_id"] = nil
        try JSONSerialization.data(withJSONObject: members).write(to: url)

        let reopened = try await open()
        #expect(try await reopened.history().entries.map(\.sequence) == Array(1...40))
        for value in 41...60 { try await reopened.set(.counter, value) }
        let history = try await reopened.history()
        #expect(history.entries.map(\.sequence) == Array(1...60))
        #expect(history.earlierHistories.isEmpty)
        #expect(try setAsideArchives().isEmpty)
    }
}
