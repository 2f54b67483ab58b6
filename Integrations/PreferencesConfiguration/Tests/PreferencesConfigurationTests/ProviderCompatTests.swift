import Configuration
import ConfigurationTesting
import Foundation
import Preferences
import PreferencesConfiguration
import PreferencesEtcd
import Testing

/// swift-configuration's own contract for providers, run over a file store
/// and over a one-member etcd.
@Suite struct ProviderCompatTests {
    /// The values `ProviderCompatTest` expects, as a store keeps them:
    /// bytes as the base64 text a `Data` value is stored as.
    static let expectedValues: [String: PreferenceValue] = [
        "string": "Hello",
        "other.string": "Other Hello",
        "int": 42,
        "other.int": 24,
        "double": 3.14,
        "other.double": 2.72,
        "bool": true,
        "other.bool": false,
        "bytes": .string(magic),
        "other.bytes": .string(magic2),
        "stringy.array": ["Hello", "World"],
        "other.stringy.array": ["Hello", "Swift"],
        "inty.array": [42, 24],
        "other.inty.array": [16, 32],
        "doubly.array": [3.14, 2.72],
        "other.doubly.array": [0.9, 1.8],
        "booly.array": [true, false],
        "other.booly.array": [false, true, true],
        "byteChunky.array": [.string(magic), .string(magic2)],
        "other.byteChunky.array": [.string(magic), .string(magic2), .string(magic)],
    ]
    /// The test's byte values, "magic" and "magic2", in base64.
    static let magic = Data("magic".utf8).base64EncodedString()
    static let magic2 = Data("magic2".utf8).base64EncodedString()

    @Test func aFileStorePassesTheProviderCompatTest() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { try $0.merge(Self.expectedValues) }
        try await withDeadline(.seconds(60)) { progress in
            progress.waiting(for: "ProviderCompatTest on a file store")
            try await ProviderCompatTest(provider: PreferencesProvider(store: store)).runTest()
        }
    }

    @Test(.enabled(if: TestEtcd.isInstalled, "needs etcd"))
    func anEtcdStorePassesTheProviderCompatTest() async throws {
        let etcd = try await TestEtcd()
        defer { etcd.stop() }
        let store = try await PreferencesStore(etcd: etcd.configuration, key: "/prefs/compat")
        try await store.edit { try $0.merge(Self.expectedValues) }
        try await withDeadline(.seconds(60)) { progress in
            progress.waiting(for: "ProviderCompatTest on etcd at \(etcd.endpoint)")
            try await ProviderCompatTest(provider: PreferencesProvider(store: store)).runTest()
        }
    }
}
