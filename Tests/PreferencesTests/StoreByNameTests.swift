import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Reading one key by name (`storedValue(forKey:)`) and asking whether it
/// is secret (`isSecret(_:)`), as adapters such as a configuration
/// provider do.
@Suite(.timeLimit(.minutes(5)))
struct StoreByNameTests {
    @Test func aStoredValueIsReadByNameAndADefaultIsNot() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        store.register(defaults: ["greeting": "hello"])
        try await store.set(.counter, 3)
        #expect(store.storedValue(forKey: "counter") == .int(3))
        #expect(store.storedValue(forKey: "greeting") == nil)
        #expect(store.storedValue(forKey: "language") == nil)
        try await store.edit { $0.set(raw: "counter", 9, until: Date().addingTimeInterval(3600)) }
        #expect(store.storedValue(forKey: "counter") == .int(9), "a temporary value stands in")
    }

    @Test func aKeyIsSecretWhenThisProcessDeclaresItOrTheStoreListsIt() async throws {
        let declaring = try await PreferencesStore(
            storage: InMemoryStorage(), declaring: [PreferenceKeys.apiToken])
        #expect(declaring.isSecret("api_token"))
        #expect(!declaring.isSecret("language"))
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        // A store that declares nothing, over the document a declaring writer wrote.
        let writer = try await PreferencesStore(fileURL: url, declaring: [PreferenceKeys.apiToken])
        try await writer.set(.apiToken, "hunter2")
        let written = try Data(contentsOf: url)
        let reader = try await PreferencesStore(storage: InMemoryStorage(bytes: Array(written)))
        #expect(reader.isSecret("api_token"))
        #expect(!reader.isSecret("language"))
    }
}
