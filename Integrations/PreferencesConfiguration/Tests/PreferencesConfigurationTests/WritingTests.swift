import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import PreferencesEtcd
import Testing

/// Writes through the provider go where a read of the same key looks,
/// durably, into the history, keeping secrets and declared types.
@Suite struct WritingTests {
    /// A write of `value` at `key` over `before`, and what the store holds after.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var before: [String: PreferenceValue]
        var key: AbsoluteConfigKey
        var separator = "."
        var value: ConfigValue?
        var after: [String: PreferenceValue]
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a stored key", before: ["http.port": 8080], key: "http.port", value: 9090,
            after: ["http.port": 9090]),
        Case(
            name: "a new key", before: [:], key: "http.port", value: 9090,
            after: ["http.port": 9090]),
        Case(
            name: "a record's field", before: ["window": ["width": 800, "height": 600]],
            key: "window.width", value: 1024, after: ["window": ["width": 1024, "height": 600]]),
        Case(
            name: "a nested field",
            before: ["service": ["http": ["port": 80, "host": "a"]]],
            key: "service.http.port", value: 81,
            after: ["service": ["http": ["port": 81, "host": "a"]]]),
        Case(
            name: "a field no read reaches is a key of its own",
            before: ["window": ["width": 800]], key: "window.depth", value: 3,
            after: ["window": ["width": 800], "window.depth": 3]),
        Case(
            name: "a stored key before a record's field",
            before: ["window": ["width": 800], "window.width": 640], key: "window.width",
            value: 1024, after: ["window": ["width": 800], "window.width": 1024]),
        Case(
            name: "another separator", before: [:], key: ["http", "port"], separator: "/",
            value: 9090, after: ["http/port": 9090]),
        Case(
            name: "bytes as base64", before: [:], key: "tls.key",
            value: ConfigValue(.bytes([1, 2, 3]), isSecret: false), after: ["tls.key": "AQID"]),
        Case(
            name: "an array", before: [:], key: "http.ports",
            value: ConfigValue(.intArray([80, 443]), isSecret: false),
            after: ["http.ports": [80, 443]]),
        Case(
            name: "removing a key", before: ["http.port": 8080, "other": 1], key: "http.port",
            value: nil, after: ["other": 1]),
        Case(
            name: "removing a record's field", before: ["window": ["width": 800, "height": 600]],
            key: "window.width", value: nil, after: ["window": ["height": 600]]),
    ]

    @Test(arguments: cases)
    func aWriteGoesWhereAReadOfTheKeyLooks(_ write: Case) async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        if !write.before.isEmpty { try await store.edit { try $0.merge(write.before) } }
        let provider = PreferencesProvider(store: store, separator: write.separator)
        try await provider.setValue(write.value, forKey: write.key)
        #expect(store.snapshot.values == write.after)
        // A read of the key, of the value's type, returns what was written.
        let type = write.value.map { Self.type(of: $0.content) } ?? .int
        let read = try provider.value(forKey: write.key, type: type)
        #expect(read.value?.content == write.value?.content)
    }

    static func type(of content: ConfigContent) -> ConfigType {
        switch content {
        case .string: .string
        case .int: .int
        case .double: .double
        case .bool: .bool
        case .bytes: .bytes
        case .stringArray: .stringArray
        case .intArray: .intArray
        case .doubleArray: .doubleArray
        case .boolArray: .boolArray
        case .byteChunkArray: .byteChunkArray
        }
    }

    @Test func aWriteIsDurableWhenItReturnsAndInTheHistoryWithTheProgram() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        let provider = PreferencesProvider(store: store)
        try await provider.setValue(9090, forKey: "http.port")
        // In the file at once, before anything else runs here: a write still
        // under way when `setValue` returned (a few milliseconds of encoding,
        // two fsyncs and a rename) is not there yet.
        let bytes = try #require(
            FileManager.default.contents(atPath: file.path),
            "no file at \(file.path) when setValue returned")
        let document = try JSONSerialization.jsonObject(with: bytes)
        let values = (document as? [String: Any])?["values"] as? [String: Any]
        #expect(values?["http.port"] as? Int == 9090, "the file holds \(values ?? [:])")
        // Another process reads it from the file.
        let read = try await prefs("--file", file.path, "get", "http.port")
        #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == "9090")
        let entry = try #require(try await store.history().entries.last)
        #expect(entry.program == ProcessInfo.processInfo.processName)
        #expect(entry.changes["http.port"]?.new == 9090)
    }

    @Test(.enabled(if: TestEtcd.isInstalled, "needs etcd"))
    func aWriteThroughEtcdIsReadByAnotherClientWhenItReturns() async throws {
        let etcd = try await TestEtcd()
        defer { etcd.stop() }
        let store = try await PreferencesStore(etcd: etcd.configuration, key: "/prefs/writes")
        try await store.edit { $0[raw: "window"] = ["width": 800, "height": 600] }
        let provider = PreferencesProvider(store: store)
        try await provider.setValue(1024, forKey: "window.width")
        let read = try await prefs(
            "--etcd", etcd.endpoint, "--key", "/prefs/writes", "get", "window", "--json")
        #expect(read.output.contains("1024"), "\(read.output)")
        let entry = try #require(try await store.history().entries.last)
        #expect(entry.changes["window"]?.new == ["width": 1024, "height": 600])
    }

    @Test func aKeyAManifestDeclaresSecretStaysSecret() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try FileStorage(fileURL: file).manifests!.publish(
            Array(
                PreferencesManifest(entries: ["api.token": .init(type: .string, secret: true)])
                    .jsonText.utf8), program: "billing")
        let provider = PreferencesProvider(store: store)
        try await provider.setValue("hunter2-token", forKey: "api.token")
        let entry = try #require(try await store.history().entries.last)
        #expect(entry.changes["api.token"] == .secretChange)
        #expect(store.snapshot.secretKeys.contains("api.token"))
        let log = try await prefs("--file", file.path, "log")
        #expect(!log.output.contains("hunter2-token"))
        #expect(try provider.value(forKey: "api.token", type: .string).value?.isSecret == true)
    }

    @Test func aValueWrittenAsSecretStaysSecret() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "db"] = ["host": "db-1", "password": "old-pass"] }
        let provider = PreferencesProvider(store: store)
        try await provider.setValue(
            ConfigValue("s3cret-pass", isSecret: true), forKey: "db.password")
        #expect(store.snapshot.values["db"] == ["host": "db-1", "password": "s3cret-pass"])
        let entry = try #require(try await store.history().entries.last)
        // The record holding the secret is what changed: it is kept out.
        #expect(entry.changes["db"] == .secretChange)
        #expect(!entry.description.contains("s3cret-pass"))
        #expect(try provider.value(forKey: "db.password", type: .string).value?.isSecret == true)
    }

    @Test func aValueOfTheWrongTypeForADeclaredKeyIsRefusedNamingTheKey() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit {
            $0[raw: "http.port"] = 8080
            $0[raw: "api.token"] = "old-token"
        }
        try FileStorage(fileURL: file).manifests!.publish(
            Array(
                PreferencesManifest(entries: [
                    "http.port": .init(type: .int, maximum: 65535),
                    "api.token": .init(type: .string, secret: true),
                ]).jsonText.utf8), program: "billing")
        let provider = PreferencesProvider(store: store)

        let wrongType = await #expect(throws: PreferencesError.self) {
            try await provider.setValue("eighty", forKey: "http.port")
        }
        guard case .invalidValue(let key, _)? = wrongType else {
            Issue.record("expected invalidValue, got \(String(describing: wrongType))")
            return
        }
        #expect(key == "http.port")
        #expect(
            "\(wrongType.map { "\($0)" } ?? "")"
                == #"invalid value for key 'http.port': must be an int, not a string "eighty" (declared by program billing)"#
        )
        let outOfRange = await #expect(throws: PreferencesError.self) {
            try await provider.setValue(70000, forKey: "http.port")
        }
        #expect("\(outOfRange.map { "\($0)" } ?? "")".contains("http.port"))
        #expect(store.storedValue(forKey: "http.port") == 8080, "nothing written")

        // A secret's refused value is not quoted.
        let secret = await #expect(throws: PreferencesError.self) {
            try await provider.setValue(4_242_424, forKey: "api.token")
        }
        let text = secret.map { "\($0)" } ?? ""
        #expect(text.contains("api.token"))
        #expect(!text.contains("4242424"), "\(text)")
        #expect(store.storedValue(forKey: "api.token") == "old-token")
    }
}
