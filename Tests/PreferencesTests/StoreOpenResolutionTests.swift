import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Opening a store resolves its file's link once for the whole open (the
/// identity, the watch and the first read share it). After the open, every
/// call resolves the link again (S10): a link pointed elsewhere is followed.
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreOpenResolutionTests {
    static let language = PreferenceKey<String>("language", default: "en")

    @Test func aLinkPointedElsewhereAfterTheOpenIsFollowed() async throws {
        let directory = try TemporaryDirectory()
        let first = directory.file("first.json")
        let second = directory.file("second.json")
        let link = directory.file("link.json")
        try await PreferencesStore(fileURL: first, liveReads: false).set(Self.language, "fr")
        try await PreferencesStore(fileURL: second, liveReads: false).set(Self.language, "de")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: first)

        let storage = FileStorage(fileURL: link)
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        #expect(store[Self.language] == "fr")
        #expect(try storage.target() == first.path)

        try FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: second)
        #expect(try storage.target() == second.path)
        try await store.reload()
        #expect(store[Self.language] == "de")
        // A write goes to the link's new target and leaves the old one be.
        try await store.set(Self.language, "it")
        #expect(contents(second)?.contains(#""language" : "it""#) == true)
        #expect(contents(first)?.contains(#""language" : "fr""#) == true)
    }

    @Test func anOpenThatFailsLeavesNoResolutionBehind() async throws {
        let directory = try TemporaryDirectory()
        let bad = directory.file("bad.json")
        let good = directory.file("good.json")
        let link = directory.file("link.json")
        try write("not json", to: bad)
        try await PreferencesStore(fileURL: good, liveReads: false).set(Self.language, "de")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: bad)

        let storage = FileStorage(fileURL: link)
        await #expect(throws: PreferencesError.self) {
            _ = try await PreferencesStore(storage: storage, liveReads: false)
        }
        try FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: good)
        #expect(try storage.target() == good.path)
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        #expect(store[Self.language] == "de")
    }

    @Test func theWatchOfALinkedFileSeesItsTargetReplaced() async throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("real.json")
        let link = directory.file("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let store = try await PreferencesStore(fileURL: link)
        #expect(store[Self.language] == "en")
        // Another program replaces the target, as an editor saves.
        let text = #"{"format" : 1, "values" : {"language" : "fr"}}"#
        try Data(text.utf8).write(to: target, options: .atomic)
        let seen = await eventually { store[Self.language] == "fr" }
        #expect(seen, "the store never read the replaced target through its link")
    }
}
