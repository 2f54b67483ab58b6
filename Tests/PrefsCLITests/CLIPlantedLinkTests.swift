import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Root's `prefs --system` in a directory that a service's user owns, after
/// that user planted a link named like one of the store's files, pointing
/// at something of root's (S19 in
/// Sources/Preferences/Preferences.docc/StoreGuarantees.md; the table in
/// ServiceSettings.md says what each does). The link's target never
/// changes, bytes or mode.
@Suite(
    .enabled(if: canSwitchUser, "needs root and setpriv to plant links as another user"),
    .scaledTimeLimit(minutes: 10))
struct CLIPlantedLinkTests {
    /// A valid store document: written through, it would be taken as the store.
    static let victimText =
        "{\n  \"format\" : 1,\n  \"values\" : {\n    \"root_only\" : 1\n  }\n}\n"

    let system: SystemHome
    /// Root's folder, mode 0700, holding the victims.
    let victims: TemporaryDirectory

    init() async throws {
        system = try SystemHome(owner: nobodyUser)
        victims = try TemporaryDirectory()
        chmod(victims.path, 0o700)
        let output = try await system.prefs(["set", "greeting", "hello"], as: nobodyUser)
        #expect(output.status == 0, "\(output.standardError)")
    }

    /// A root file with a valid store document, mode 0640.
    func victimFile() throws -> URL {
        let victim = victims.file("victim.json")
        try write(Self.victimText, to: victim)
        chmod(victim.path, 0o640)
        return victim
    }

    /// A root folder holding one file that looks like a manifest and a
    /// registration nobody holds.
    func victimFolder() throws -> URL {
        let folder = victims.file("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try write(#"{"format":1,"keys":{}}"#, to: folder.appendingPathComponent("host-1.json"))
        return folder
    }

    /// Everything at `url` as it is now: each file's path, mode and bytes.
    func state(_ url: URL) -> [String] {
        var paths = [url.path]
        if let names = try? FileManager.default.subpathsOfDirectory(atPath: url.path) {
            paths += names.sorted().map { url.path + "/" + $0 }
        }
        return paths.map { path in
            let mode = fileStatus(path, followingLinks: false).map { String($0.st_mode, radix: 8) }
            return "\(path) \(mode ?? "-") \(contents(URL(fileURLWithPath: path)) ?? "")"
        }
    }

    /// Makes `name` in the suite's directory a link to `target`, as the
    /// service's user, replacing what is there.
    func plant(_ name: String, pointingAt target: URL) async throws {
        let link = system.beside(name).path
        let made = try await ChildCommand(
            program: "/bin/ln", ["-sfn", target.path, link], user: nobodyUser
        ).run()
        #expect(made.status == 0, "\(made.standardError)")
        #expect(FileIntegrity.linkOwner(link) == nobodyUser)
    }

    /// Root's write after the link `name` was planted at `target`: it fails
    /// naming the link and its owner, the target and the store stay as they
    /// were.
    func expectRefused(_ name: String, target: URL) async throws {
        let targetBefore = state(target)
        let storeBefore = contents(system.store)
        let output = try await system.prefs(["set", "greeting", "hi"])
        #expect(output.status == 5, "\(name): \(output.standardError)")
        #expect(output.standardError.split(separator: "\n").count == 1, "\(output.standardError)")
        #expect(output.standardError.contains(system.beside(name).path), "\(output.standardError)")
        #expect(output.standardError.contains("nobody"), "\(output.standardError)")
        #expect(state(target) == targetBefore)
        if name != "svc.json" { #expect(contents(system.store) == storeBefore) }
    }

    @Test(arguments: ["svc.json", "svc.json.lock", "svc.keys.json"])
    func aLinkForTheStoreItsLockOrItsManifestIsRefused(name: String) async throws {
        let victim = try victimFile()
        try await plant(name, pointingAt: victim)
        try await expectRefused(name, target: victim)
    }

    @Test func aLinkForTheHistoryArchiveIsRefused() async throws {
        // Sixteen changes in the document: the next write moves them to the archive.
        for round in 2...16 {
            let output = try await system.prefs(["set", "n", "\(round)"], as: nobodyUser)
            #expect(output.status == 0, "\(output.standardError)")
        }
        let victim = try victimFile()
        try await plant("svc.json.history", pointingAt: victim)
        try await expectRefused("svc.json.history", target: victim)
        let log = try await system.prefs(["log"])
        #expect(log.status == 5, "\(log.standardError)")
        #expect(log.standardError.contains(system.beside("svc.json.history").path))
    }

    @Test(arguments: ["svc.keys.d", "svc.replicas.d"])
    func aLinkForTheManifestsOrRegistrationsFolderIsRefused(name: String) async throws {
        let folder = try victimFolder()
        try await plant(name, pointingAt: folder)
        try await expectRefused(name, target: folder)
        // A registration nobody holds would be removed: not through the link.
        #expect(FileManager.default.fileExists(atPath: folder.path + "/host-1.json"))
    }

    /// A name a temporary file could have is never opened: the write makes
    /// its own, and the sweep of orphaned ones removes the link, not its target.
    @Test func aLinkNamedLikeATemporaryFileIsRemovedNotFollowed() async throws {
        let victim = try victimFile()
        let name = ".svc.json.abcdefghijkl.tmp"
        try await plant(name, pointingAt: victim)
        let before = state(victim)
        let output = try await system.prefs(["set", "greeting", "hi"])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(state(victim) == before)
        #expect(!FileIntegrity.exists(system.beside(name).path))
        let read = try await system.prefs(["get", "greeting"], as: nobodyUser)
        #expect(read.standardOutput == "hi\n", "\(read.standardError)")
        #expect(FileIntegrity.owner(system.store.path) == nobodyUser)
        #expect(try permissions(system.store) == 0o600)
    }
}
