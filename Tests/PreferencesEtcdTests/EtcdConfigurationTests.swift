import Foundation
import PreferencesEtcd
import PreferencesEtcdTLS
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Where the backend's credentials come from (E5):
/// `EtcdCredentials.fromEnvironment(_:passwordFile:)` reads
/// `$PREFS_ETCD_USER` with `$PREFS_ETCD_PASSWORD`, or with the first line of
/// a password file, which wins over the variable. Every environment here
/// is given, never the test process's own.
@Suite(.scaledTimeLimit(minutes: 1))
struct EtcdCredentialsTests {
    /// Calls `body` with the path of a password file holding `text`, in a
    /// fresh directory that lasts until `body` returns.
    func withPasswordFile(_ text: String, _ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("password")
        try write(text, to: file)
        try withExtendedLifetime(directory) { try body(file.path) }
    }

    @Test func theUserAndPasswordComeFromTheEnvironment() throws {
        let credentials = try EtcdCredentials.fromEnvironment([
            "PREFS_ETCD_USER": "maps", "PREFS_ETCD_PASSWORD": " pass word \n",
        ])
        // The variable is taken as it is, spaces and line break included.
        #expect(credentials == EtcdCredentials(user: "maps", password: " pass word \n"))
    }

    @Test func withoutAUserThereAreNoCredentials() throws {
        #expect(try EtcdCredentials.fromEnvironment([:]) == nil)
        #expect(try EtcdCredentials.fromEnvironment(["PREFS_ETCD_PASSWORD": "secret"]) == nil)
        #expect(
            try EtcdCredentials.fromEnvironment([
                "PREFS_ETCD_USER": "", "PREFS_ETCD_PASSWORD": "secret",
            ]) == nil)
    }

    @Test func aUserWithoutAnyPasswordIsAnInvalidValueNamingTheUser() {
        #expect {
            try EtcdCredentials.fromEnvironment(["PREFS_ETCD_USER": "maps"])
        } throws: { error in
            guard case PreferencesError.invalidValue(let key, let reason) = error else {
                return false
            }
            return key == "PREFS_ETCD_USER" && reason.contains("'maps'")
                && reason.contains("$PREFS_ETCD_PASSWORD") && reason.contains("password file")
        }
    }

    @Test(
        "The password is the file's first line, without its line break",
        arguments: [
            ("s3cret\n", "s3cret"),
            ("s3cret", "s3cret"),
            ("s3cret\r\n", "s3cret"),
            ("s3cret\nsecond line\n", "s3cret"),
            (" pass word \n", " pass word "),
            ("\nsecond line\n", ""),
        ])
    func thePasswordIsTheFilesFirstLine(contents: String, password: String) throws {
        try withPasswordFile(contents) { file in
            let credentials = try EtcdCredentials.fromEnvironment(
                ["PREFS_ETCD_USER": "maps"], passwordFile: file)
            #expect(credentials == EtcdCredentials(user: "maps", password: password))
        }
    }

    @Test func thePasswordFileWinsOverTheVariable() throws {
        try withPasswordFile("from-file\n") { file in
            let credentials = try EtcdCredentials.fromEnvironment(
                ["PREFS_ETCD_USER": "maps", "PREFS_ETCD_PASSWORD": "from-variable"],
                passwordFile: file)
            #expect(credentials == EtcdCredentials(user: "maps", password: "from-file"))
        }
    }

    @Test func aPasswordFileThatCannotBeReadIsAnIOErrorNamingIt() throws {
        let directory = try TemporaryDirectory()
        // Missing, and a directory.
        for (path, errno) in [(directory.file("missing").path, ENOENT), (directory.path, EISDIR)] {
            #expect {
                try EtcdCredentials.fromEnvironment(
                    ["PREFS_ETCD_USER": "maps", "PREFS_ETCD_PASSWORD": "secret"],
                    passwordFile: path)
            } throws: { error in
                guard case PreferencesError.io(let operation, let named, let code, _) = error else {
                    return false
                }
                return operation == "read the etcd password file" && named == path
                    && code == errno
            }
        }
        withExtendedLifetime(directory) {}
    }

    /// As `--etcd-password-file <(pass show etcd)` gives it.
    @Test func aPasswordFileMayBeAPipe() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let text = Array("from-a-pipe\n".utf8)
        #expect(write(ends[1], text, text.count) == text.count)
        close(ends[1])
        let credentials = try EtcdCredentials.fromEnvironment(
            ["PREFS_ETCD_USER": "maps"], passwordFile: "/dev/fd/\(ends[0])")
        #expect(credentials == EtcdCredentials(user: "maps", password: "from-a-pipe"))
    }

    @Test func aPasswordFileWithoutAUserIsAnInvalidValue() throws {
        try withPasswordFile("secret\n") { file in
            #expect {
                try EtcdCredentials.fromEnvironment(
                    ["PREFS_ETCD_PASSWORD": "x"], passwordFile: file)
            } throws: { error in
                guard case PreferencesError.invalidValue(let key, let reason) = error else {
                    return false
                }
                return key == "PREFS_ETCD_USER" && reason.contains(file)
            }
        }
    }
}

/// `https` needs TLS, a library of its own (`PreferencesEtcdTLS`), so that a
/// service reached over `http` links none: without it, an `https` endpoint
/// is refused with one line naming the endpoint and the library.
@Suite(.scaledTimeLimit(minutes: 1))
struct EtcdTLSConfigurationTests {
    /// Whether `error` is the refusal of `endpoint` for want of TLS.
    func isRefusal(_ error: any Error, of endpoint: String) -> Bool {
        guard case PreferencesError.invalidValue(let key, let reason) = error else { return false }
        return key == "etcd endpoints" && reason.contains("'\(endpoint)'")
            && reason.contains("PreferencesEtcdTLS") && !"\(error)".contains("\n")
    }

    @Test func anHTTPSEndpointWithoutTLSIsRefusedAsTheConfigurationIsMade() {
        #expect {
            try EtcdConfiguration(endpoints: "http://etcd-1:2379, https://etcd-2:2379")
        } throws: { error in
            isRefusal(error, of: "https://etcd-2:2379")
        }
    }

    @Test func aConfigurationOfURLsIsRefusedWhenAStoreIsOpenedOnIt() async {
        let configuration = EtcdConfiguration(endpoints: [URL(string: "HTTPS://etcd-1:2379")!])
        #expect {
            try EtcdStorage(configuration: configuration, key: "/prefs/app")
        } throws: { error in
            isRefusal(error, of: "HTTPS://etcd-1:2379")
        }
        await #expect {
            try await PreferencesStore(etcd: configuration, suite: "app")
        } throws: { error in
            isRefusal(error, of: "HTTPS://etcd-1:2379")
        }
    }

    @Test func withTLSHTTPSEndpointsAreAccepted() throws {
        let configuration = try EtcdConfiguration(
            endpoints: "https://etcd-1:2379,http://etcd-2:2379", tls: .systemTrustStore)
        #expect(configuration.tls == .systemTrustStore)
        #expect(configuration.endpointList == "https://etcd-1:2379,http://etcd-2:2379")
        _ = try EtcdStorage(configuration: configuration, key: "/prefs/app")
        var fromURLs = EtcdConfiguration(endpoints: configuration.endpoints)
        fromURLs.tls = .systemTrustStore
        #expect(fromURLs == configuration)
    }

    @Test func httpEndpointsNeedNoTLS() throws {
        let configuration = try EtcdConfiguration(endpoints: "http://etcd-1:2379")
        #expect(configuration.tls == nil)
        _ = try EtcdStorage(configuration: configuration, key: "/prefs/app")
    }
}

/// One reader for an endpoint list, `EtcdConfiguration.endpoints(parsing:)`,
/// which the configuration and `prefs`'s choice of `prefs-tls` both use:
/// white space around each element goes, an empty element or one that is no
/// `http`/`https` URL with a host is one line naming it.
@Suite(.scaledTimeLimit(minutes: 1))
struct EtcdEndpointListTests {
    @Test(
        "White space around each endpoint goes, line breaks included",
        arguments: [
            ("http://etcd-1:2379", ["http://etcd-1:2379"]),
            (
                " http://etcd-1:2379 ,\thttp://etcd-2:2379",
                ["http://etcd-1:2379", "http://etcd-2:2379"]
            ),
            ("http://etcd-1:2379\n", ["http://etcd-1:2379"]),
            (
                "\r\nHTTPS://etcd-1:2379,\u{00A0}http://etcd-2:2379",
                ["HTTPS://etcd-1:2379", "http://etcd-2:2379"]
            ),
        ])
    func whiteSpaceAroundEachEndpointGoes(list: String, expected: [String]) throws {
        let endpoints = try EtcdConfiguration.endpoints(parsing: list)
        #expect(endpoints.map(\.absoluteString) == expected)
        let configuration = try EtcdConfiguration(endpoints: list, tls: .systemTrustStore)
        #expect(configuration.endpoints == endpoints)
    }

    @Test(
        "An empty element, an empty list or an element that is no URL is one line naming it",
        arguments: [
            ("", "no endpoint given (comma-separated URLs)"),
            ("  \n", "no endpoint given (comma-separated URLs)"),
            (
                "http://etcd-1:2379,",
                "endpoint 2 of 2 in 'http://etcd-1:2379,' is empty (a doubled or trailing comma)"
            ),
            (
                "http://etcd-1:2379,  ,http://etcd-2:2379",
                "endpoint 2 of 3 in 'http://etcd-1:2379,  ,http://etcd-2:2379' is empty (a doubled or trailing comma)"
            ),
            (
                ",http://etcd-1:2379",
                "endpoint 1 of 2 in ',http://etcd-1:2379' is empty (a doubled or trailing comma)"
            ),
            ("etcd-1:2379", "'etcd-1:2379' is not an http:// or https:// URL with a host"),
            (
                "http://etcd-1:2379, ftp://etcd-2",
                "'ftp://etcd-2' is not an http:// or https:// URL with a host"
            ),
            ("http://", "'http://' is not an http:// or https:// URL with a host"),
            (
                "http://etcd 1:2379",
                "'http://etcd 1:2379' is not an http:// or https:// URL with a host"
            ),
        ])
    func aBadListIsOneLineNamingTheEndpoint(list: String, reason: String) {
        for parse in [
            { _ = try EtcdConfiguration.endpoints(parsing: list) },
            { _ = try EtcdConfiguration(endpoints: list, tls: .systemTrustStore) },
        ] {
            #expect {
                try parse()
            } throws: { error in
                guard case PreferencesError.invalidValue(let key, let said) = error else {
                    return false
                }
                return key == "etcd endpoints" && said == reason && !"\(error)".contains("\n")
            }
        }
    }
}
