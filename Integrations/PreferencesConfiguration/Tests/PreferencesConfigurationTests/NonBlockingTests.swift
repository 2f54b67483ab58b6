import Configuration
import Foundation
import MetricsTestKit
import Preferences
import Synchronization
import Testing

@testable import PreferencesConfiguration

/// The provider never blocks its caller: no I/O in `init`, manifest reads
/// in the background or awaited, and snapshots that are values.
@Suite struct NonBlockingTests {
    static let tokenManifest = PreferencesManifest(entries: [
        "api.token": .init(type: .string, secret: true)
    ])

    @Test func initReadsNothingAndFetchValueAwaitsTheManifestsOffTheCallersThread() async throws {
        let directory = try TemporaryDirectory()
        let storage = GatedStorage(fileURL: directory.file("service.json"))
        let store = try await PreferencesStore(storage: storage)
        try await store.edit { $0[raw: "http.port"] = 8080 }
        storage.gate.close()

        // Within a task named "caller", a read made on the caller's thread
        // would see the name.
        try await ReadingTask.$name.withValue("caller") {
            // With every manifest read held, init returns at once.
            let provider = PreferencesProvider(store: store, refreshInterval: .seconds(3600))
            #expect(
                try provider.value(forKey: "http.port", type: .int).value?.content == .int(8080))

            // fetchValue waits for its manifest read without holding the
            // caller's thread: this task goes on meanwhile.
            let fetch = Task { try await provider.fetchValue(forKey: "http.port", type: .int) }
            try await eventually("the fetch's manifest read to wait at the gate") {
                storage.gate.counts.waiting >= 2
            }
            storage.gate.open()
            let fetched = try await fetch.value
            #expect(fetched.value?.content == .int(8080))
        }
        let counts = storage.gate.counts
        #expect(counts.inNamedTask == 0, "no manifest read on the caller's thread")
        #expect(counts.waitedOut == 0, "no read held until the gate's limit")
        #expect(counts.reads >= 2, "the provider's first read and the fetch's")
    }

    @Test func aSecretDeclaredAfterTheProviderStartsIsFollowedWithTheStore() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "api.token"] = "hunter2" }
        // No refresh by the clock: only the store's changes make it read.
        let provider = PreferencesProvider(store: store, refreshInterval: .seconds(3600))
        #expect(try provider.value(forKey: "api.token", type: .string).value?.isSecret == false)
        let before = provider.snapshot()

        // Another program publishes a manifest that declares the key
        // secret; then the store changes (by a write that does not know
        // the secret, so the store itself does not list it).
        try FileStorage(fileURL: file).manifests!.publish(
            Array(Self.tokenManifest.jsonText.utf8), program: "billing")
        try await store.edit { $0[raw: "http.port"] = 8081 }
        #expect(!store.isSecret("api.token"))
        // Closing the store ends the provider's following once it has taken
        // every change delivered before: then it has read the manifests again.
        let following = provider.following
        let ended = AsyncStream<Void> { continuation in
            Task.detached {
                await following.value
                continuation.finish()
            }
        }
        await store.close()
        try await withDeadline(.seconds(30)) { progress in
            progress.waiting(for: "the provider's background task to end after the store closed")
            for await _ in ended {}
        }
        #expect(try provider.value(forKey: "api.token", type: .string).value?.isSecret == true)
        // A snapshot is a value: the one taken before still answers as then.
        #expect(try before.value(forKey: "api.token", type: .string).value?.isSecret == false)
        #expect(
            try provider.snapshot().value(forKey: "api.token", type: .string).value?.isSecret
                == true)
    }

    @Test func fetchValueReadsAManifestPublishedAfterTheProviderWasMade() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "api.token"] = "hunter2" }
        let metrics = TestMetrics()
        // No refresh by the clock, and the store does not change: nothing
        // but fetchValue reads the manifests again.
        let provider = PreferencesProvider(
            store: store, metrics: metrics, refreshInterval: .seconds(3600))
        try await firstManifestRead(of: store, recordedIn: metrics)
        try FileStorage(fileURL: file).manifests!.publish(
            Array(Self.tokenManifest.jsonText.utf8), program: "billing")
        #expect(
            try provider.value(forKey: "api.token", type: .string).value?.isSecret == false,
            "the manifest is not read yet")

        let fetched = try #require(
            try await provider.fetchValue(forKey: "api.token", type: .string).value)
        #expect(fetched.isSecret)
        #expect("\(fetched)" == "[string: <REDACTED>]")
        // What the fetch read is kept for later reads.
        #expect(try provider.value(forKey: "api.token", type: .string).value?.isSecret == true)
    }

    @Test func aSecretDeclaredWhileTheStoreIsQuietIsFollowedByTheClock() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "api.token"] = "hunter2" }
        let provider = PreferencesProvider(store: store, refreshInterval: .milliseconds(20))
        try FileStorage(fileURL: file).manifests!.publish(
            Array(Self.tokenManifest.jsonText.utf8), program: "billing")
        try await eventually("the provider to read the manifest on its own") {
            try provider.value(forKey: "api.token", type: .string).value?.isSecret == true
        }
    }

    @Test func snapshotsFromAWatchKeepTheSecretsOfTheirMoment() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "api.token"] = "hunter2" }
        let provider = PreferencesProvider(store: store, refreshInterval: .milliseconds(20))
        let first = try await withDeadline(.seconds(30)) { progress in
            progress.waiting(for: "watchSnapshot's first snapshot")
            return try await provider.watchSnapshot { updates in
                var iterator = updates.makeAsyncIterator()
                return try await iterator.next()
            }
        }
        let snapshot = try #require(first)
        try FileStorage(fileURL: file).manifests!.publish(
            Array(Self.tokenManifest.jsonText.utf8), program: "billing")
        try await eventually("the provider to read the manifest") {
            try provider.value(forKey: "api.token", type: .string).value?.isSecret == true
        }
        #expect(try snapshot.value(forKey: "api.token", type: .string).value?.isSecret == false)
    }

    @Test func theProvidersBackgroundTaskEndsWhenTheStoreCloses() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let provider = PreferencesProvider(store: store, refreshInterval: .milliseconds(20))
        try await eventually("the provider's feeds to start") {
            store.activity.feedSubscribers >= 2
        }
        // Awaiting a task's value cannot be cancelled: a task of its own
        // awaits it, and the test waits for its flag, with a deadline.
        let ended = Mutex(false)
        let following = provider.following
        Task.detached {
            await following.value
            ended.withLock { $0 = true }
        }
        await store.close()
        try await eventually(
            "the provider's background task to end after the store closed", within: .seconds(30)
        ) { ended.withLock { $0 } }
    }
}
