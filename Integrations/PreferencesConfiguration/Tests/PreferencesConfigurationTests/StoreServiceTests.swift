import Foundation
import Logging
import Preferences
import PreferencesServiceLifecycle
import ServiceLifecycle
import Testing

/// The store's `Service` in this process: it closes the store when its
/// group shuts down, and when its task is cancelled.
@Suite struct StoreServiceTests {
    let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test func aGracefulShutdownOfTheGroupClosesTheStore() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "greeting"] = "Hello" }
        let (started, starting) = AsyncStream<Void>.makeStream()
        let group = ServiceGroup(
            services: [
                PreferencesStoreService(store: store, logger: quiet),
                StartSignal(starting: starting),
            ], logger: quiet)
        let running = Task { try await group.run() }
        defer { running.cancel() }
        // A feed of the store ends when the store closes.
        let feed = store.changes(PreferenceKey<String>("greeting", default: ""))
        try await withDeadline(.seconds(30), progress: named("the group to start")) { _ in
            for await _ in started { return }
        }
        await group.triggerGracefulShutdown()
        try await withDeadline(.seconds(30), progress: named("the group to end")) { _ in
            try await running.value
        }
        try await withDeadline(.seconds(30), progress: named("the store's feed to end")) { _ in
            for await _ in feed {}
        }
        await #expect(throws: PreferencesError.closed(location: store.location)) {
            try await store.edit { $0[raw: "greeting"] = "Bonjour" }
        }
        #expect(store[PreferenceKey<String>("greeting", default: "")] == "Hello")
    }

    @Test func cancellingTheServiceClosesTheStoreAndThrowsCancellation() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let service = PreferencesStoreService(store: store, logger: quiet)
        let running = Task { try await service.run() }
        running.cancel()
        let outcome = try await withDeadline(.seconds(30), progress: named("the service to end")) {
            _ in
            await running.result
        }
        #expect(throws: CancellationError.self) { try outcome.get() }
        await #expect(throws: PreferencesError.closed(location: store.location)) {
            try await store.edit { $0[raw: "greeting"] = "Bonjour" }
        }
    }
}

/// A service that says when its group has started it, then waits for the
/// group's graceful shutdown.
private struct StartSignal: Service {
    let starting: AsyncStream<Void>.Continuation

    func run() async throws {
        starting.yield()
        try? await gracefulShutdown()
    }
}
