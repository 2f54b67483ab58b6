import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system scope (<doc:ServiceSettings>): one place per suite, which the
/// store never creates.
@Suite(.scaledTimeLimit(minutes: 5)) struct SystemScopeTests {
    @Test func theSystemScopeIsOneDirectoryPerSuiteUnderItsHome() throws {
        let moved = [
            "PREFS_SYSTEM_HOME": "/srv/prefs", "PREFS_HOME": "/home/u/p", "HOME": "/home/u",
        ]
        #expect(
            try PreferencesLocation.fileURL(
                suite: "com.example.api", scope: .system, environment: moved
            )
            .path == "/srv/prefs/com.example.api/com.example.api.json")
        #expect(
            PreferencesLocation.directory(scope: .system, environment: moved).path == "/srv/prefs")
        // The user scope is untouched by it, and stays the default.
        #expect(
            try PreferencesLocation.fileURL(suite: "com.example.api", environment: moved).path
                == "/home/u/p/com.example.api.json")
        let unset = ["PREFS_SYSTEM_HOME": "", "HOME": "/home/u"]
        #if canImport(Darwin)
            let root = "/Library/Preferences/prefs"
        #else
            let root = "/var/lib/prefs"
        #endif
        #expect(
            try PreferencesLocation.fileURL(suite: "svc", scope: .system, environment: unset).path
                == root + "/svc/svc.json")
        // A suite name can no more climb out of the system scope than out of a home.
        for bad in ["..", "../etc/shadow", "a/b", ".hidden", ""] {
            #expect(throws: PreferencesError.invalidSuiteName(bad)) {
                try PreferencesLocation.fileURL(suite: bad, scope: .system, environment: moved)
            }
        }
    }

    @Test func openingASuiteWhoseSystemDirectoryIsMissingFailsNamingItAndHowToMakeIt() async throws
    {
        let suite = "prefs-tests-\(UUID().uuidString)"
        let directory = try PreferencesLocation.fileURL(suite: suite, scope: .system)
            .deletingLastPathComponent().path
        try #require(!FileManager.default.fileExists(atPath: directory))
        do {
            _ = try await PreferencesStore(suite: suite, scope: .system)
            Issue.record("opened a system store without its directory")
        } catch let error as PreferencesError {
            let text = error.description
            #expect(text.contains(directory), "\(text)")
            if directory == "/var/lib/prefs/" + suite {
                #expect(text.contains("StateDirectory=prefs/\(suite)"), "\(text)")
            }
            #expect(text.contains("install -d"), "\(text)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    /// Whoever writes (root too, where the tests run as root), the system
    /// scope's directory is never made: it must belong to the service's user.
    @Test func aWriteNeverCreatesTheSystemScopesDirectory() async throws {
        let home = try TemporaryDirectory()
        let environment = ["PREFS_SYSTEM_HOME": home.path]
        let storage = try PreferencesLocation.storage(
            suite: "svc", scope: .system, environment: environment)
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        do {
            try await store.set(PreferenceKey<Int>("a", default: 0), 1)
            Issue.record("a write created \(home.path)/svc")
        } catch let error as PreferencesError {
            #expect(error.description.contains(home.path + "/svc:"), "\(error)")
            #expect(error.description.contains("never creates it"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.path + "/svc"))

        // Once it is made, the same store writes.
        try FileManager.default.createDirectory(
            atPath: home.path + "/svc", withIntermediateDirectories: false)
        try await store.set(PreferenceKey<Int>("a", default: 0), 2)
        #expect(try storedInteger("a", in: home.file("svc/svc.json")) == 2)
        #expect(try permissions(home.file("svc/svc.json")) == 0o600)
    }

    /// Root publishing a manifest (a program run as root that declares
    /// keys) into a directory that a service's user owns, after that user
    /// made the manifests folder, or its `versions` folder, a link to a
    /// folder of root's: nothing is written there, and the store lists why.
    @Test(
        .enabled(if: canSwitchUser, "needs root and setpriv to plant links as another user"),
        arguments: ["svc.keys.d", "svc.keys.d/versions"])
    func publishingNeverEntersAManifestsFolderAnotherUserLinked(name: String) async throws {
        let system = try SystemHome(owner: nobodyUser)
        let made = try await system.prefs(["set", "greeting", "hello"], as: nobodyUser)
        #expect(made.status == 0, "\(made.standardError)")
        if name.hasSuffix("/versions") {
            let folder = try await ChildCommand(
                program: "/bin/mkdir", [system.beside("svc.keys.d").path], user: nobodyUser
            ).run()
            #expect(folder.status == 0, "\(folder.standardError)")
        }
        let victims = try TemporaryDirectory()
        chmod(victims.path, 0o700)
        let link = try await ChildCommand(
            program: "/bin/ln", ["-s", victims.path, system.beside(name).path], user: nobodyUser
        ).run()
        #expect(link.status == 0, "\(link.standardError)")

        let store = try await PreferencesStore(
            storage: FileStorage(fileURL: system.store), declaring: [PreferenceKeys.language],
            liveReads: false)
        let problems = store.problems.map(\.message).joined(separator: "; ")
        #expect(problems.contains(system.beside(name).path), "\(problems)")
        #expect(problems.contains("nobody"), "\(problems)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victims.path).isEmpty)
    }
}
