import Foundation
import PreferencesTestSupport
import Testing

/// `prefs` against an endpoint whose answers etcd never sends: exit status
/// 5 and one line naming the endpoint and the field at fault, never "not
/// set" or an empty list. The answers come from ``CannedEtcd``.
@Suite(.scaledTimeLimit(minutes: 1))
struct EtcdCLIMalformedAnswerTests {
    static let encodedKey = Data("/prefs/app".utf8).base64EncodedString()

    static let cases: [(command: [String], path: String, answer: String, field: String)] = [
        (["get", "k"], "/v3/kv/range", #"{"header":{"revision":"3"},"kvs":"not-a-list"}"#, "kvs"),
        (
            ["list"], "/v3/kv/range",
            #"{"header":{"revision":"3"},"kvs":[{"key":"\#(encodedKey)","value":"%%%","mod_revision":"2"}]}"#,
            "kvs[0].value"
        ),
        (["get", "k"], "/v3/kv/range", #"{"kvs":[]}"#, "header is missing"),
        (
            ["set", "k", "v"], "/v3/kv/txn", #"{"header":{"revision":"3"},"succeeded":1}"#,
            "succeeded"
        ),
    ]

    @Test(arguments: cases)
    func aMalformedAnswerIsExitStatus5NamingTheEndpoint(
        command: [String], path: String, answer: String, field: String
    ) async throws {
        let server = try CannedEtcd([path: answer])
        let result = try await runChild(
            "prefs", ["--etcd", server.url.absoluteString, "--suite", "app"] + command,
            environment: cleanEnvironment())
        #expect(result.status == 5, "\(result.standardOutput) \(result.standardError)")
        #expect(result.standardOutput.isEmpty)
        let error = result.standardError
        #expect(
            error.hasPrefix("prefs: error: ")
                && error.contains(
                    "etcd at \(server.url.absoluteString) sent a malformed answer to \(path): \(field)"
                ),
            "\(error)")
        #expect(error.filter { $0 == "\n" }.count == 1, "\(error)")
    }
}
