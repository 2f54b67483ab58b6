import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `prefs --system`: the system scope that a service and its operators share
/// (Sources/Preferences/Preferences.docc/ServiceSettings.md).
@Suite(.scaledTimeLimit(minutes: 10)) struct CLISystemScopeTests {
    @Test func pathPrintsTheFileTheLibraryOpensAndCreatesNothing() async throws {
        let system = try SystemHome()
        let output = try await system.prefs(["path"])
        #expect(output.status == 0, "\(output.standardError)")
        let library = try PreferencesLocation.fileURL(
            suite: "svc", scope: .system, environment: ["PREFS_SYSTEM_HOME": system.home.path])
        #expect(output.standardOutput == library.path + "\n")
        #expect(library.path == system.home.path + "/svc/svc.json")
        #expect(!FileManager.default.fileExists(atPath: system.directory.path))
    }

    @Test func helpListsSystemAmongTheGlobalOptions() async throws {
        let output = try await runChild("prefs", ["--help"])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput.contains("--system"), "\(output.standardOutput)")
        let path = try await runChild("prefs", ["path", "--help"])
        #expect(path.standardOutput.contains("/var/lib/prefs/NAME/NAME.json"))
    }

    @Test func theLibraryAndPrefsReachTheSameStore() async throws {
        let system = try SystemHome(owner: getuid())
        let storage = try PreferencesLocation.storage(
            suite: "svc", scope: .system, environment: ["PREFS_SYSTEM_HOME": system.home.path])
        let store = try await PreferencesStore(storage: storage, liveReads: false)
        let greeting = PreferenceKey<String>("greeting", default: "")
        try await store.set(greeting, "hello")
        let read = try await system.prefs(["get", "greeting"])
        #expect(read.status == 0, "\(read.standardError)")
        #expect(read.standardOutput == "hello\n")
        #expect(try await system.prefs(["set", "greeting", "hi"]).status == 0)
        try await store.reload()
        #expect(store[greeting] == "hi")
    }

    @Test func aMissingDirectoryIsOneLineNamingItAndHowToMakeIt() async throws {
        let system = try SystemHome()
        for arguments in [["set", "a", "1"], ["get", "a"], ["list"]] {
            let output = try await system.prefs(arguments)
            #expect(output.status == 5, "\(arguments): \(output.standardError)")
            let lines = output.standardError.split(separator: "\n")
            #expect(lines.count == 1, "\(output.standardError)")
            #expect(output.standardError.contains(system.directory.path + ":"))
            #expect(output.standardError.contains("install -d -m 0700"))
            // systemd makes /var/lib/prefs/svc, not this one: it is not named.
            #expect(!output.standardError.contains("StateDirectory"))
        }
        #expect(!FileManager.default.fileExists(atPath: system.directory.path))
    }

    @Test func systemGoesWithASuiteNotWithAFileOrEtcd() async throws {
        let system = try SystemHome()
        for other in [
            ["--file", system.home.path + "/x.json"],
            ["--suite", "svc", "--etcd", "http://127.0.0.1:9"],
        ] {
            let output = try await runChild(
                "prefs", ["--system"] + other + ["path"], environment: system.environment)
            #expect(output.status == 2, "\(other): \(output.standardError)")
            #expect(output.standardError.contains("--system"), "\(output.standardError)")
        }
    }

    /// What a service and root do to one store: the service runs as an
    /// unprivileged user and watches; root sets a value with `prefs
    /// --system`; the file stays the service's, and a secret stays out of a
    /// third user's reach.
    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to run as other users"))
    func aServiceSeesRootsChangeAndKeepsItsFile() async throws {
        // systemd's default StateDirectoryMode: the file's own mode keeps it private.
        let system = try SystemHome(owner: nobodyUser, mode: 0o755)
        let first = try await system.prefs(["set", "greeting", "hello"], as: nobodyUser)
        #expect(first.status == 0, "\(first.standardError)")
        let before = try #require(fileStatus(system.store.path))
        #expect(UInt32(before.st_uid) == nobodyUser)
        #expect(UInt32(before.st_mode) & 0o777 == 0o600)

        let watch = try ChildCommand(
            "prefs", ["--system", "--suite", "svc", "watch", "greeting"],
            environment: system.environment, output: .errorsShown, user: nobodyUser
        ).start()
        // The current value comes first: once it is printed, the watch is live.
        let current = try await watch.nextLine()
        #expect(current?.contains(#""value":"hello""#) == true, "\(current ?? "nothing")")

        let set = try await system.prefs(["set", "greeting", "hi"])
        #expect(set.status == 0, "\(set.standardError)")
        let seen = try await watch.nextLine()
        #expect(seen?.contains(#""value":"hi""#) == true, "\(seen ?? "nothing")")
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)

        let after = try #require(fileStatus(system.store.path))
        #expect(UInt32(after.st_uid) == nobodyUser)
        #expect(UInt32(after.st_gid) == UInt32(before.st_gid))
        #expect(after.st_mode == before.st_mode)
        for made in ["svc.json.lock"] {
            #expect(FileIntegrity.owner(system.beside(made).path) == nobodyUser, "\(made)")
        }

        // A secret root sets is out of another unprivileged user's reach.
        let manifest = system.home.file("keys.json")
        try write(
            #"{"format":1,"keys":{"api_token":{"type":"string","secret":true}}}"#, to: manifest)
        let secret = try await system.prefs(
            ["--manifest", manifest.path, "set", "api_token", "s3cr3t-Zq9"])
        #expect(secret.status == 0, "\(secret.standardError)")
        let other: UInt32 = nobodyUser - 1
        let denied = try await system.prefs(["get", "api_token"], as: other)
        #expect(denied.status == 5, "\(denied.standardOutput) \(denied.standardError)")
        #expect(denied.standardError.contains(system.store.path), "\(denied.standardError)")
        #expect(denied.standardError.contains("Permission denied"), "\(denied.standardError)")
        #expect(!denied.standardOutput.contains("s3cr3t"))
        let cat = try await ChildCommand(program: "/bin/cat", [system.store.path], user: other)
            .run()
        #expect(cat.status != 0)
        #expect(!cat.standardOutput.contains("s3cr3t"))
        // The service itself reads it.
        let own = try await system.prefs(["get", "api_token"], as: nobodyUser)
        #expect(own.standardOutput == "s3cr3t-Zq9\n", "\(own.standardError)")
    }
}
