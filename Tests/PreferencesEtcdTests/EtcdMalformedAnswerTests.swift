import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences
@testable import PreferencesEtcd

/// An answer etcd never sends — a field present with the wrong type, a
/// header missing — is an I/O error naming the endpoint and the field,
/// never an empty store or a revision of 0. A field left out is etcd's way
/// of saying zero, and stays valid. The answers come from ``CannedEtcd``.
@Suite(.scaledTimeLimit(minutes: 1))
struct EtcdMalformedAnswerTests {
    static let key = "/prefs/app"
    static let encodedKey = Data(key.utf8).base64EncodedString()
    /// A document, base64, as a range's `value`.
    static let encodedDocument = Data(#"{"values":{"k":1}}"#.utf8).base64EncodedString()

    /// A storage on `server`, whose calls give up after 2 s.
    static func storage(on server: CannedEtcd) throws -> EtcdStorage {
        try EtcdStorage(
            configuration: EtcdConfiguration(endpoints: [server.url], timeout: 2), key: key,
            sharesStateInProcess: false)
    }

    /// Whether `error` is the one line for a malformed answer from `server`
    /// that names `field`.
    static func isMalformed(_ error: any Error, from server: CannedEtcd, naming field: String)
        -> Bool
    {
        guard case PreferencesError.io(_, let path, let code, let message) = error else {
            return false
        }
        return path == key && code == EBADMSG
            && message.hasPrefix("etcd at \(server.url.absoluteString) sent a malformed answer")
            && message.contains(field) && !"\(error)".contains("\n")
    }

    /// A range answer with `kvs` as given.
    static func range(kvs: String) -> String {
        #"{"header":{"revision":"9"},"kvs":\#(kvs),"count":"1"}"#
    }

    static let malformedRanges: [(field: String, answer: String)] = [
        ("kvs", range(kvs: #""not-a-list""#)),
        ("kvs[0]", range(kvs: "[42]")),
        ("kvs[0].key", range(kvs: #"[{"value":"\#(encodedDocument)","mod_revision":"3"}]"#)),
        (
            "kvs[0].value",
            range(kvs: #"[{"key":"\#(encodedKey)","value":"%%%","mod_revision":"3"}]"#)
        ),
        (
            "kvs[0].mod_revision",
            range(
                kvs:
                    #"[{"key":"\#(encodedKey)","value":"\#(encodedDocument)","mod_revision":"three"}]"#
            )
        ),
        (
            "kvs[0].mod_revision",
            range(
                kvs: #"[{"key":"\#(encodedKey)","value":"\#(encodedDocument)","mod_revision":{}}]"#)
        ),
        ("header is missing", #"{"kvs":[]}"#),
        ("header.revision", #"{"header":{"revision":"nine"}}"#),
        ("header", #"{"header":[]}"#),
        ("count", #"{"header":{"revision":"9"},"count":true}"#),
    ]

    @Test(arguments: malformedRanges)
    func aMalformedRangeAnswerIsAnErrorNamingTheEndpoint(field: String, answer: String) throws {
        let server = try CannedEtcd(["/v3/kv/range": answer])
        let storage = try Self.storage(on: server)
        for read in [
            { _ = try storage.read() }, { _ = try storage.currentRevision() },
            { _ = try storage.historyArchive?.read() },
            { _ = try storage.manifests?.programManifests() },
        ] {
            #expect {
                try read()
            } throws: { error in
                Self.isMalformed(error, from: server, naming: field)
            }
        }
    }

    static let malformedTransactions: [(field: String, answer: String)] = [
        ("succeeded", #"{"header":{"revision":"9"},"succeeded":"yes"}"#),
        ("header is missing", #"{"succeeded":true}"#),
        ("responses", #"{"header":{"revision":"9"},"responses":{}}"#),
        (
            "responses[0].response_range.kvs",
            #"{"header":{"revision":"9"},"responses":[{"response_range":{"header":{},"kvs":7}}]}"#
        ),
    ]

    @Test(arguments: malformedTransactions)
    func aMalformedTransactionAnswerIsAnErrorNamingTheEndpoint(field: String, answer: String)
        throws
    {
        // The range before the write finds no key: a well-formed answer.
        let server = try CannedEtcd(["/v3/kv/txn": answer])
        let storage = try Self.storage(on: server)
        #expect {
            try storage.write(Array(#"{"values":{}}"#.utf8), ifRevision: .absent)
        } throws: { error in
            Self.isMalformed(error, from: server, naming: field)
        }
        #expect(server.paths == ["/v3/kv/txn"], "the write was sent once")
    }

    @Test func aLeaseGrantWithoutAnIDIsAnErrorNamingTheEndpoint() throws {
        let server = try CannedEtcd(["/v3/lease/grant": #"{"header":{},"TTL":"10"}"#])
        let storage = try Self.storage(on: server)
        #expect {
            try storage.replicas?.register(
                PreferencesReplica(
                    host: "h", pid: 1, program: "p", manifest: "", since: Date(), applied: 0))
        } throws: { error in
            guard case PreferencesError.io(_, _, let code, let message) = error else {
                return false
            }
            return code == EBADMSG && message.contains(server.url.absoluteString)
                && message.contains("ID is missing")
        }
    }

    /// A watch line etcd never sends (a value that is not base64) is no
    /// change: the watch leaves the stream that sent it and reports only
    /// what it read with well-formed answers.
    @Test func aMalformedWatchLineIsNoChange() async throws {
        let event =
            #"{"kv":{"key":"\#(Self.encodedKey)","value":"%%%","mod_revision":"5"}}"#
        let server = try CannedEtcd([
            "/v3/watch": #"{"result":{"header":{"revision":"1"},"created":true}}"# + "\n"
                + #"{"result":{"header":{"revision":"5"},"events":[\#(event)]}}"# + "\n"
        ])
        let storage = try Self.storage(on: server)
        let changes = Locked<[StoredContents?]>([])
        let watch = try #require(
            try storage.watch { event in
                if case .changed(let contents) = event { changes.withLock { $0.append(contents) } }
            } as? EtcdWatchStream)
        defer { watch.cancel() }
        // Once the stream is asked for again, the first one's lines were handled.
        #expect(
            await eventually { server.paths.filter { $0 == "/v3/watch" }.count >= 2 },
            "the watch was not opened twice: \(server.paths)")
        let seen = changes.value
        #expect(seen.count == 1 && seen.first??.revision == .absent, "\(seen)")
        #expect(
            watch.recentHistory().contains {
                $0.contains("malformed answer: result.events[0].kv.value is not base64")
            }, "\(watch.recentHistory())")
    }

    /// etcd leaves out a field at its zero value: no `kvs` is no key, no
    /// `succeeded` a compare that failed, no `mod_revision`… of 0.
    @Test func fieldsLeftOutAreZeroNotErrors() throws {
        let absent = try CannedEtcd(["/v3/kv/range": #"{"header":{"revision":"7"}}"#])
        let contents = try Self.storage(on: absent).read()
        #expect(contents.bytes == nil && contents.revision == .absent)

        let present = try CannedEtcd([
            "/v3/kv/range": Self.range(
                kvs:
                    #"[{"key":"\#(Self.encodedKey)","value":"\#(Self.encodedDocument)","mod_revision":3}]"#
            )
        ])
        let found = try Self.storage(on: present).read()
        #expect(found.bytes == Array(#"{"values":{"k":1}}"#.utf8))
        #expect(found.revision == StorageRevision("3"))

        let lost = try CannedEtcd(["/v3/kv/txn": #"{"header":{"revision":"8"}}"#])
        #expect(try Self.storage(on: lost).write(Array("{}".utf8), ifRevision: .absent) == nil)
    }
}
