import Configuration
import Foundation
import MetricsTestKit
import Preferences
import PreferencesConfiguration
import Testing

extension PreferenceKeys {
    fileprivate static let apiToken = PreferenceKey<String>(
        "api.token", default: "", secret: true)
}

/// A record whose nested struct is stored as one JSON object.
private struct ServiceSettings: PreferencesRecord {
    var window = Window()

    struct Window: Codable, Sendable, Equatable {
        var width = 800
        var height = 600
    }
}

/// How keys, types and secrets map from a store to swift-configuration.
@Suite struct ReadingTests {
    /// One stored value that does not fit the type read.
    struct Mismatch: Sendable, CustomStringConvertible {
        var stored: PreferenceValue
        var json: String
        var type: ConfigType
        var storedType: String
        var description: String { "\(stored.jsonText) as \(type)" }
    }

    static let mismatches: [Mismatch] = [
        Mismatch(stored: "eighty", json: #""eighty""#, type: .int, storedType: "a string"),
        Mismatch(stored: 8080, json: "8080", type: .string, storedType: "an integer"),
        Mismatch(stored: "yes", json: #""yes""#, type: .bool, storedType: "a string"),
        Mismatch(stored: 1.5, json: "1.5", type: .int, storedType: "a number"),
        Mismatch(
            stored: "not base64!", json: #""not base64!""#, type: .bytes, storedType: "a string"),
        Mismatch(stored: ["a", "b"], json: #"["a","b"]"#, type: .intArray, storedType: "an array"),
        Mismatch(stored: [1, 2], json: "[1,2]", type: .stringArray, storedType: "an array"),
    ]

    @Test(arguments: mismatches)
    func aValueOfAnotherTypeFailsAsTheJSONProviderFails(_ mismatch: Mismatch) async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.port"] = mismatch.stored }
        let jsonFile = directory.file("service-config.json")
        try Data(#"{"http": {"port": \#(mismatch.json)}}"#.utf8).write(to: jsonFile)
        let json = try await FileProvider<JSONSnapshot>(
            config: ConfigReader(
                provider: InMemoryProvider(values: [
                    "filePath": ConfigValue(.string(jsonFile.path), isSecret: false)
                ])))

        let ours = #expect(throws: PreferencesProviderError.self) {
            try PreferencesProvider(store: store).value(
                forKey: ["http", "port"], type: mismatch.type)
        }
        let theirs = #expect(throws: (any Error).self) {
            try json.value(forKey: ["http", "port"], type: mismatch.type)
        }
        #expect(ours.map { "\($0)" } == theirs.map { "\($0)" })
        #expect(ours?.key == "http.port")
        #expect(ours?.requestedType == mismatch.type)
        #expect(ours?.storedType == mismatch.storedType)
    }

    @Test func aReaderGetsTheSameErrorAsFromTheJSONProvider() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.port"] = "eighty" }
        let config = ConfigReader(provider: PreferencesProvider(store: store))
        let error = #expect(throws: PreferencesProviderError.self) {
            try config.requiredInt(forKey: "http.port")
        }
        #expect(
            error?.description == "Config value for key 'http.port' failed to convert to type int.")
        // The non-throwing read falls back to its default.
        #expect(config.int(forKey: "http.port", default: 80) == 80)
    }

    @Test func aKeyAnotherProgramsManifestDeclaresSecretIsSecret() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        // Another program published its manifest beside the store; this
        // process declares nothing and writes the value itself.
        let manifest = PreferencesManifest(entries: [
            "api.token": .init(type: .string, secret: true),
            "log.level": .init(type: .string),
        ])
        try FileStorage(fileURL: file).manifests?.publish(
            Array(manifest.jsonText.utf8), program: "billing-service")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit {
            $0[raw: "api.token"] = "s3cr3t"
            $0[raw: "log.level"] = "debug"
        }
        #expect(!store.isSecret("api.token"))
        let metrics = TestMetrics()
        let provider = PreferencesProvider(store: store, metrics: metrics)
        // The provider reads the manifests in the background as it starts.
        try await firstManifestRead(of: store, recordedIn: metrics)
        #expect(
            try provider.value(forKey: ["api", "token"], type: .string).value?.isSecret == true)
        #expect(
            try provider.value(forKey: ["log", "level"], type: .string).value?.isSecret == false)
    }

    @Test func aKeyTheServiceDeclaresSecretIsSecretAfterPrefsSetsIt() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        // The service declares the key secret; an operator sets it from a shell.
        let store = try await PreferencesStore(fileURL: file, declaring: [PreferenceKeys.apiToken])
        try await withDeadline(.seconds(60)) { progress in
            progress.waiting(for: "`prefs set` to end")
            try await prefs("--file", file.path, "set", "api.token", "s3cr3t")
            try await prefs("--file", file.path, "set", "log.level", "debug")
        }
        let provider = PreferencesProvider(store: store)
        let token = try await provider.fetchValue(forKey: ["api", "token"], type: .string).value
        let level = try await provider.fetchValue(forKey: ["log", "level"], type: .string).value
        #expect(token?.content == .string("s3cr3t"))
        #expect(token?.isSecret == true)
        #expect(level?.isSecret == false)
        #expect("\(try #require(token))" == "[string: <REDACTED>]")
        // Snapshots and watches say so too.
        let snapshot = provider.snapshot()
        #expect(
            try snapshot.value(forKey: ["api", "token"], type: .string).value?.isSecret == true)
    }

    @Test func keysGivenAsSecretAreSecret() async throws {
        let store = try await PreferencesStore(storage: InMemoryStorage())
        try await store.edit { $0[raw: "db.password"] = "hunter2" }
        let provider = PreferencesProvider(store: store, secretKeys: ["db.password"])
        #expect(
            try provider.value(forKey: ["db", "password"], type: .string).value?.isSecret == true)
        let plain = PreferencesProvider(store: store)
        #expect(
            try plain.value(forKey: ["db", "password"], type: .string).value?.isSecret == false)
    }

    @Test func aKeyThisProcessDeclaresSecretIsSecretOnAnyBackend() async throws {
        // Memory publishes no manifest: the store's own declaration counts.
        let store = try await PreferencesStore(
            storage: InMemoryStorage(), declaring: [PreferenceKeys.apiToken])
        try await store.set(.apiToken, "s3cr3t")
        let provider = PreferencesProvider(store: store)
        #expect(
            try provider.value(forKey: ["api", "token"], type: .string).value?.isSecret == true)
        #expect(
            try provider.snapshot().value(forKey: ["api", "token"], type: .string).value?.isSecret
                == true)
    }

    @Test func aDottedKeyReachesIntoARecord() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.record(ServiceSettings.self).update { $0.window.width = 1024 }
        let provider = PreferencesProvider(store: store)
        // A provider behind it answers only for keys this one finds absent.
        let config = ConfigReader(providers: [
            provider, InMemoryProvider(values: ["window.depth": 7, "window.width.inches": 9]),
        ])
        #expect(config.int(forKey: "window.width") == 1024)
        #expect(config.int(forKey: "window.height") == 600)
        // A field the object lacks, and a field of a field that is no
        // object, are absent: no value and no error.
        #expect(try provider.value(forKey: "window.depth", type: .int).value == nil)
        #expect(try provider.value(forKey: "window.width.inches", type: .int).value == nil)
        #expect(config.int(forKey: "window.depth") == 7)
        #expect(config.int(forKey: "window.width.inches") == 9)
        // A key stored under the whole dotted name comes first.
        try await store.edit { $0[raw: "window.width"] = 640 }
        #expect(config.int(forKey: "window.width") == 640)
    }

    @Test func aSecretRecordsFieldsAreSecret() async throws {
        let store = try await PreferencesStore(storage: InMemoryStorage())
        try await store.edit { $0[raw: "db"] = ["user": "app", "password": "hunter2"] }
        let provider = PreferencesProvider(store: store, secretKeys: ["db"])
        #expect(
            try provider.value(forKey: ["db", "password"], type: .string).value?.isSecret == true)
    }

    @Test func theSeparatorCanBeChosen() async throws {
        let store = try await PreferencesStore(storage: InMemoryStorage())
        try await store.edit {
            $0[raw: "http_port"] = 8080
            $0[raw: "http.port"] = 1
            $0[raw: "log.level"] = "debug"
        }
        let provider = PreferencesProvider(store: store, separator: "_")
        let port = try provider.value(forKey: "http.port", type: .int)
        #expect(port.encodedKey == "http_port")
        #expect(port.value?.content == .int(8080))
        // A key stored under its dotted name alone is not read: it is
        // absent, so the provider behind answers.
        let level = try provider.value(forKey: "log.level", type: .string)
        #expect(level.encodedKey == "log_level")
        #expect(level.value == nil)
        let config = ConfigReader(providers: [
            provider, InMemoryProvider(values: ["log.level": "info"]),
        ])
        #expect(config.int(forKey: "http.port") == 8080)
        #expect(config.string(forKey: "log.level") == "info")
    }

    @Test func typesMapAsDocumented() async throws {
        let store = try await PreferencesStore(storage: InMemoryStorage())
        let token = Data([0, 1, 2, 255])
        try await store.edit {
            $0[raw: "count"] = 3
            $0[raw: "ratio"] = 3
            $0[raw: "whole"] = 3.0
            $0[raw: "key"] = .string(token.base64EncodedString())
            $0[raw: "empty"] = []
            $0[raw: "nothing"] = .null
        }
        let provider = PreferencesProvider(store: store)
        // A stored null is absent: the provider behind answers.
        let config = ConfigReader(providers: [
            provider, InMemoryProvider(values: ["nothing": "from the next provider"]),
        ])
        #expect(config.int(forKey: "count") == 3)
        #expect(config.double(forKey: "ratio") == 3.0)
        #expect(config.int(forKey: "whole") == 3)
        #expect(config.bytes(forKey: "key") == [0, 1, 2, 255])
        #expect(config.string(forKey: "key") == token.base64EncodedString())
        #expect(config.intArray(forKey: "empty") == [])
        #expect(config.stringArray(forKey: "empty") == [])
        #expect(try provider.value(forKey: "nothing", type: .string).value == nil)
        #expect(config.string(forKey: "nothing") == "from the next provider")
    }

    @Test func theProviderIsNamedAfterTheStoresLocation() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        let provider = PreferencesProvider(store: store)
        #expect(provider.providerName == "PreferencesProvider[\(store.location)]")
        #expect(provider.providerName.contains("service.json"))
        #expect(provider.snapshot().providerName == provider.providerName)
    }
}
