import Foundation
import PreferencesTestSupport
import Testing

/// `prefs` links no TLS: an invocation whose etcd endpoints include an
/// `https` one runs in `prefs-tls`, found beside `prefs`, with the same
/// arguments and environment; without it, one line says where it was
/// looked for. (`EtcdCLITLSTests` runs the real `prefs-tls` on a TLS
/// cluster.)
@Suite(.scaledTimeLimit(minutes: 2))
struct CLITLSHandOffTests {
    /// A copy of the built `prefs` in a directory of its own, with or
    /// without a `prefs-tls` that prints its command line and
    /// `$PREFS_TEST_MARK`, one a line, and exits 7.
    struct Installation {
        let directory: TemporaryDirectory
        var prefs: String { directory.file("prefs").path }
        var prefsTLS: String { directory.file("prefs-tls").path }

        init(withPrefsTLS: Bool) throws {
            directory = try TemporaryDirectory()
            try FileManager.default.copyItem(at: productURL("prefs"), to: directory.file("prefs"))
            guard withPrefsTLS else { return }
            try write(
                "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" \"$PREFS_TEST_MARK\"\nexit 7\n",
                to: directory.file("prefs-tls"))
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o755], ofItemAtPath: prefsTLS)
        }

        /// Runs `program` (this copy of `prefs` by default) with `arguments`.
        func run(
            _ arguments: [String], environment: [String: String] = [:], program: String? = nil
        ) async throws -> ProcessOutput {
            try await runProgram(
                program ?? prefs, arguments,
                environment: cleanEnvironment().merging(environment) { _, given in given })
        }
    }

    @Test func anHTTPSInvocationRunsInPrefsTLSWithTheSameArgumentsAndEnvironment() async throws {
        let installed = try Installation(withPrefsTLS: true)
        let arguments = ["--etcd", "http://etcd-1:2379,https://etcd-2:2379", "get", "two words"]
        let result = try await installed.run(arguments, environment: ["PREFS_TEST_MARK": "kept"])
        #expect(result.status == 7, "\(result.standardError)")
        #expect(
            result.standardOutput
                == ([installed.prefsTLS] + arguments + ["kept"]).map { $0 + "\n" }.joined())

        // Through a link elsewhere, prefs-tls is looked for beside the real file.
        let elsewhere = try TemporaryDirectory()
        let link = elsewhere.file("prefs").path
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: installed.prefs)
        let linked = try await installed.run(arguments, program: link)
        #expect(linked.status == 7, "\(linked.standardError)")
        #expect(linked.standardOutput.hasPrefix(installed.prefsTLS + "\n"))
    }

    @Test func theEndpointsMayComeFromTheEnvironmentWhereFileWins() async throws {
        let installed = try Installation(withPrefsTLS: true)
        let environment = ["PREFS_ETCD_ENDPOINTS": "https://etcd-1:2379"]
        let handed = try await installed.run(
            ["--key", "/apps/maps", "path"], environment: environment)
        #expect(handed.status == 7, "\(handed.standardError)")
        #expect(handed.standardOutput.hasPrefix(installed.prefsTLS + "\n--key\n/apps/maps\npath\n"))

        // With --file the variable is not used: prefs runs on the file itself.
        let file = installed.directory.file("settings.json").path
        let own = try await installed.run(["--file", file, "path"], environment: environment)
        #expect(own.status == 0, "\(own.standardError)")
        #expect(own.standardOutput == file + "\n")
    }

    /// The list is read as the configuration reads it: white space around an
    /// endpoint, line breaks included, goes; a list that does not parse is
    /// answered by `prefs` itself with one line naming the endpoint at fault.
    @Test func theListIsReadAsTheConfigurationReadsIt() async throws {
        let installed = try Installation(withPrefsTLS: true)
        let spaced = "http://etcd-1:2379 ,\n\tHTTPS://etcd-2:2379\n"
        let handed = try await installed.run(["--etcd", spaced, "path"])
        #expect(handed.status == 7, "\(handed.standardError)")

        for (list, said) in [
            (
                "https://etcd-1:2379,,http://etcd-2:2379",
                "endpoint 2 of 3 in 'https://etcd-1:2379,,http://etcd-2:2379' is empty"
            ),
            ("https://etcd-1:2379,etcd-2", "'etcd-2' is not an http:// or https:// URL"),
        ] {
            let refused = try await installed.run(["--etcd", list, "get", "language"])
            #expect(refused.status == 2, "\(refused.standardOutput)")
            #expect(refused.standardOutput.isEmpty)
            #expect(
                refused.standardError.hasPrefix("prefs: error: etcd endpoints: \(said)"),
                "\(refused.standardError)")
            #expect(refused.standardError.filter { $0 == "\n" }.count == 1)
        }
    }

    @Test func helpAndVersionAreAnsweredByPrefsItself() async throws {
        let installed = try Installation(withPrefsTLS: false)
        for asked in ["--help", "--version"] {
            let result = try await installed.run(["--etcd", "https://etcd-1:2379", asked])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(!result.standardOutput.isEmpty)
        }
    }

    @Test func withoutPrefsTLSAnHTTPSEndpointIsOneLineNamingWhereItWasLookedFor() async throws {
        let installed = try Installation(withPrefsTLS: false)
        let result = try await installed.run(["--etcd", "https://etcd-1:2379", "get", "language"])
        #expect(result.status == 5)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.standardError
                == "prefs: error: https://etcd-1:2379 needs prefs-tls, installed beside prefs: \(installed.prefsTLS): No such file or directory\n"
        )
    }
}
