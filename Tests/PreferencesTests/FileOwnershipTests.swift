import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Root changing another user's store (S14, <doc:StoreGuarantees>), and symlinks planted by
/// another user (S19, <doc:StoreGuarantees>). Both need root and `setpriv`, to be the other user.
@Suite(
    .enabled(if: canSwitchUser, "needs root and setpriv to act as another user"),
    .scaledTimeLimit(minutes: 10))
struct FileOwnershipTests {
    @Test func sudoPrefsSetLeavesEverythingItCreatesToTheStoresOwner() async throws {
        let directory = try TemporaryDirectory()
        let service = directory.file("service")
        try FileManager.default.createDirectory(at: service, withIntermediateDirectories: false)
        giveAway(service.path, to: nobodyUser)
        chmod(service.path, 0o700)
        let file = service.appendingPathComponent("prefs.json")
        let nested = service.appendingPathComponent("sub/deeper/prefs.json")
        for url in [file, nested] {
            let result = try await runChild(
                "prefs", ["--file", url.path, "set", "a", "1"])
            #expect(result.status == 0, "\(result.standardError)")
        }
        let created = [
            file.path, file.path + ".lock", service.path + "/sub", service.path + "/sub/deeper",
            nested.path, nested.path + ".lock",
        ]
        for path in created {
            #expect(
                FileIntegrity.owner(path) == nobodyUser,
                "\(path) belongs to \(String(describing: FileIntegrity.owner(path)))")
        }
        // The service, running as its owner, keeps writing.
        for url in [file, nested] {
            let result = try await runChild(
                "prefs", ["--file", url.path, "set", "b", "2"], as: nobodyUser)
            #expect(result.status == 0, "\(url.path): \(result.standardError)")
            #expect(try storedInteger("b", in: url) == 2)
        }
    }

    /// The first write fsyncs the directories above the store; one the
    /// caller may only pass through (0711) is left to its owner.
    @Test func aStoreBelowADirectoryTheUserCannotReadIsWritten() async throws {
        let directory = try TemporaryDirectory()
        let passage = directory.file("passage")
        let service = passage.appendingPathComponent("service")
        try FileManager.default.createDirectory(at: service, withIntermediateDirectories: true)
        chmod(passage.path, 0o711)
        giveAway(service.path, to: nobodyUser)
        chmod(service.path, 0o700)
        let file = service.appendingPathComponent("prefs.json")
        let result = try await runChild(
            "prefs", ["--file", file.path, "set", "a", "1"], as: nobodyUser)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try storedInteger("a", in: file) == 1)
    }

    @Test func aCorruptFileSetAsideByRootStaysWithTheStoresOwner() async throws {
        let directory = try TemporaryDirectory()
        giveAway(directory.path, to: nobodyUser)
        let file = directory.file("prefs.json")
        try write("not json", to: file)
        giveAway(file.path, to: nobodyUser)
        let store = try await PreferencesStore(
            fileURL: file, corruption: .replace { _ in ["restored": .int(1)] })
        #expect(store[PreferenceKey<Int>("restored", default: 0)] == 1)
        let backups = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("prefs.json.corrupt-") }
        #expect(backups.count == 1)
        let created = [file.path, file.path + ".lock"] + backups.map { directory.path + "/" + $0 }
        for path in created {
            #expect(FileIntegrity.owner(path) == nobodyUser, "\(path)")
        }
    }

    @Test func aLinkAnotherUserPlantedInAWorldWritableDirectoryIsNotFollowed() async throws {
        let shared = try TemporaryDirectory()
        chmod(shared.path, 0o1777)
        let private_ = try TemporaryDirectory()
        chmod(private_.path, 0o700)
        let victim = private_.file("victim.json")
        let original = "{\n  \"format\" : 1,\n  \"values\" : {\n    \"secret\" : 1\n  }\n}\n"
        try write(original, to: victim)
        let link = shared.file("x.json")
        try FileManager.default.createSymbolicLink(
            atPath: link.path, withDestinationPath: victim.path)
        #expect(lchown(link.path, uid_t(nobodyUser), gid_t(nobodyUser)) == 0)

        let result = try await runChild(
            "prefs", ["--file", link.path, "set", "planted", "1"])
        #expect(result.status == 5, "\(result.standardError)")
        #expect(result.standardError.contains(link.path), "\(result.standardError)")
        #expect(result.standardError.contains("nobody"), "\(result.standardError)")
        #expect(contents(victim) == original)
        #expect(!FileIntegrity.exists(victim.path + ".lock"))
        #expect(!FileIntegrity.exists(link.path + ".lock"))
        // Nothing is read through it either.
        let read = try await runChild(
            "prefs", ["--file", link.path, "get", "secret"])
        #expect(read.status == 5, "\(read.standardOutput) \(read.standardError)")
    }

    @Test func aLinkOfTheCallerOrTheDirectorysOwnerIsFollowed() async throws {
        let shared = try TemporaryDirectory()
        chmod(shared.path, 0o1777)
        let target = try TemporaryDirectory()
        let mine = shared.file("mine.json")
        try FileManager.default.createSymbolicLink(
            atPath: mine.path, withDestinationPath: target.file("mine.json").path)
        let result = try await runChild(
            "prefs", ["--file", mine.path, "set", "a", "1"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try storedInteger("a", in: target.file("mine.json")) == 1)
        #expect(FileIntegrity.linkOwner(mine.path) == 0)

        // In a directory only its owner can write, anyone's link is followed (S10).
        let closed = try TemporaryDirectory()
        let theirs = closed.file("theirs.json")
        try FileManager.default.createSymbolicLink(
            atPath: theirs.path, withDestinationPath: target.file("theirs.json").path)
        #expect(lchown(theirs.path, uid_t(nobodyUser), gid_t(nobodyUser)) == 0)
        let followed = try await runChild(
            "prefs", ["--file", theirs.path, "set", "a", "2"])
        #expect(followed.status == 0, "\(followed.standardError)")
        #expect(try storedInteger("a", in: target.file("theirs.json")) == 2)
    }
}
