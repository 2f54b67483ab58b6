import Foundation
import LocalEtcd
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// `prefs` against etcd (E7): the same commands, output and exit codes as
/// on a file.
@Suite(
    .serialized, .takesTurns(.clusters), .enabled(if: etcdAvailable, etcdUnavailableReason),
    .scaledTimeLimit(minutes: 3))
struct EtcdCLITests {
    /// Runs `prefs` with the clean environment (no PREFS_ETCD_*) and
    /// `environment` added.
    func prefs(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> ProcessOutput
    {
        try await runChild(
            "prefs", arguments, environment: cleanEnvironment().merging(environment) { $1 })
    }

    @Test func everyCommandWorksOnASuiteInEtcdWithTheSameOutput() async throws {
        let cluster = try await SharedEtcd.cluster()
        let suite = "cli-\(UUID().uuidString.prefix(8))"
        let etcd = ["--etcd", cluster.endpointList, "--suite", suite]

        #expect(try await prefs(etcd + ["path"]).line == "/prefs/\(suite)")
        #expect(try await prefs(etcd + ["get", "dark_mode"]).status == 1)
        #expect(try await prefs(etcd + ["set", "dark_mode", "true"]).status == 0)
        #expect(try await prefs(etcd + ["set", "language", "fr"]).status == 0)
        #expect(try await prefs(etcd + ["get", "language"]).line == "fr")
        #expect(try await prefs(etcd + ["get", "language", "--json"]).line == "\"fr\"")
        let listed = try await prefs(etcd + ["list"])
        #expect(listed.standardOutput == "dark_mode = true\nlanguage = \"fr\"\n")
        let bad = try await prefs(etcd + ["set", "limits", "{oops", "--type", "json"])
        #expect(bad.status == 3, "\(bad.standardError)")
        #expect(try await prefs(etcd + ["delete", "language"]).status == 0)
        #expect(try await prefs(etcd + ["delete", "language"]).status == 1)
        #expect(try await prefs(etcd + ["check"]).status == 0)

        // The library sees what the CLI wrote, under /prefs/NAME.
        let store = try await PreferencesStore(
            etcd: cluster.configuration(), suite: suite)
        #expect(store[.darkMode] == true)
        #expect(store[.language] == "en")
    }

    @Test func theEndpointsCanComeFromTheEnvironmentAndAKeyCanBeGiven() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("cli")
        let environment = ["PREFS_ETCD_ENDPOINTS": cluster.endpointList]
        #expect(
            try await prefs(["--key", key, "set", "counter", "3"], environment: environment).status
                == 0)
        #expect(try await prefs(["--key", key, "path"], environment: environment).line == key)
        #expect(
            try await prefs(["--etcd", cluster.endpointList, "--key", key, "get", "counter"]).line
                == "3")
        let shown = try await offPool { try cluster.etcdctl(["get", key, "--print-value-only"]) }
        #expect(shown.standardOutput.contains("\"counter\" : 3"))
    }

    @Test func checkNamesARelativeKeyAsGivenAndTheEndpoints() async throws {
        let cluster = try await SharedEtcd.cluster()
        // No leading slash: an etcd key, never a path under the working directory.
        let key = "prefs-test/relative-\(UUID().uuidString.prefix(8))"
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        #expect(try await prefs(etcd + ["set", "counter", "3"]).status == 0)
        let checked = try await prefs(etcd + ["check"])
        #expect(checked.status == 0, "\(checked.standardError)")
        #expect(checked.line == "\(key) on etcd \(cluster.endpointList): ok, 1 key")
        #expect(try await prefs(etcd + ["path"]).line == key)
        let put = try await offPool { try cluster.etcdctl(["put", key], input: "{ oops") }
        #expect(put.status == 0)
        let corrupt = try await prefs(etcd + ["check"])
        #expect(corrupt.status == 4, "\(corrupt.standardError)")
        #expect(corrupt.standardError.contains(key), "\(corrupt.standardError)")
        #expect(
            !corrupt.standardError.contains(FileManager.default.currentDirectoryPath + "/" + key))
    }

    @Test func badFlagsAreUsageErrors() async throws {
        let cluster = try await SharedEtcd.cluster()
        let both = try await prefs([
            "--etcd", cluster.endpointList, "--file", "/tmp/x.json", "list",
        ])
        #expect(both.status == 2, "\(both.standardError)")
        let notURL = try await prefs(["--etcd", "etcd-1:2379", "list"])
        #expect(notURL.status == 2)
        #expect(notURL.standardError.contains("'etcd-1:2379'"))
        let keyAlone = try await prefs(["--key", "/prefs/x", "list"])
        #expect(keyAlone.status == 2)
    }

    @Test func anUnreachableClusterIsExitFiveNamingTheEndpoints() async throws {
        // Held for the test, so that no server another test starts takes them.
        let (ports, held) = try LoopbackPorts.bound(2)
        defer { for socket in held { close(socket) } }
        let endpoints = ports.map { "http://127.0.0.1:\($0)" }
        let result = try await prefs(["--etcd", endpoints.joined(separator: ","), "get", "x"])
        #expect(result.status == 5)
        #expect(result.standardError.hasPrefix("prefs: error: "))
        #expect(
            endpoints.allSatisfy { result.standardError.contains($0) }, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
    }

    @Test func aPasswordComesFromAFileNeverFromTheCommandLine() async throws {
        // A member of its own with authentication on: a password file that
        // is not read, or read wrong, fails the sign-in.
        let cluster = try await offPool {
            let cluster = try EtcdCluster(size: 1)
            try cluster.enableAuthentication()
            return cluster
        }
        let directory = try TemporaryDirectory()
        let right = directory.file("right")
        try write("writerpw\n", to: right)
        let wrong = directory.file("wrong")
        try write("wrongpw\n", to: wrong)
        let key = uniqueKey("cli")
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        let writer = ["PREFS_ETCD_USER": "writer"]

        let set = try await prefs(
            etcd + ["--etcd-password-file", right.path, "set", "counter", "1"],
            environment: writer)
        #expect(set.status == 0, "\(set.standardError)")
        // The file wins over $PREFS_ETCD_PASSWORD, both ways.
        let fileWins = try await prefs(
            etcd + ["--etcd-password-file", right.path, "set", "counter", "2"],
            environment: writer.merging(["PREFS_ETCD_PASSWORD": "wrongpw"]) { $1 })
        #expect(fileWins.status == 0, "\(fileWins.standardError)")
        let refused = try await prefs(
            etcd + ["--etcd-password-file", wrong.path, "set", "counter", "3"],
            environment: writer.merging(["PREFS_ETCD_PASSWORD": "writerpw"]) { $1 })
        #expect(refused.status == 5, "\(refused.standardError)")
        #expect(
            refused.standardError.contains("'writer'")
                && refused.standardError.contains("authentication failed"),
            "\(refused.standardError)")

        let missing = directory.file("missing").path
        let unreadable = try await prefs(
            etcd + ["--etcd-password-file", missing, "list"], environment: writer)
        #expect(unreadable.status == 5, "\(unreadable.standardError)")
        #expect(unreadable.standardError.contains(missing), "\(unreadable.standardError)")
        let noPassword = try await prefs(etcd + ["list"], environment: writer)
        #expect(noPassword.status == 2, "\(noPassword.standardError)")
        #expect(
            noPassword.standardError.contains("PREFS_ETCD_PASSWORD"), "\(noPassword.standardError)")
        let noUser = try await prefs(etcd + ["--etcd-password-file", right.path, "list"])
        #expect(noUser.status == 2, "\(noUser.standardError)")
        #expect(noUser.standardError.contains("PREFS_ETCD_USER"), "\(noUser.standardError)")
        // No option takes the password itself.
        let asArgument = try await prefs(
            etcd + ["--etcd-password", "writerpw", "list"], environment: writer)
        #expect(asArgument.status == 2, "\(asArgument.standardError)")
        #expect(asArgument.standardError.contains("--etcd-password"), "\(asArgument.standardError)")

        // etcd holds the two accepted sets, not the refused one.
        let stored = try await offPool {
            try cluster.etcdctlChecked(
                ["get", key, "--print-value-only"], user: EtcdCluster.rootUser)
        }
        #expect(stored.standardOutput.contains("\"counter\" : 2"), "\(stored.standardOutput)")
    }

    @Test func watchStreamsAFleetsChanges() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("cli-watch")
        let writer = try await PreferencesStore(storage: cluster.storage(key, sharesState: false))
        try await writer.set(.counter, 1)
        let watch = try RunningProcess(
            "prefs", ["--etcd", cluster.endpointList, "--key", key, "watch", "counter"])
        // Killed if the test stops early; reaped with the Process object.
        defer { watch.kill() }
        #expect(
            CLIWatchTests.withoutModification(try await watch.nextLine())
                == #"{"key":"counter","value":1}"#)
        try await writer.set(.counter, 2)
        #expect(
            CLIWatchTests.withoutModification(try await watch.nextLine())
                == #"{"key":"counter","value":2}"#)
        let put = try await offPool {
            try cluster.etcdctl(["put", key], input: storeFile(#"{ "counter" : 7 }"#))
        }
        #expect(put.status == 0)
        #expect(try await watch.nextLine() == #"{"key":"counter","value":7}"#)
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }
}
