import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import PreferencesEtcd
import Testing

/// Changes made by an operator's `prefs set`, in another process, reach a
/// service's `ConfigReader` watch.
@Suite struct WatchTests {
    @Test func aPrefsSetInAnotherProcessReachesAWatchIntLoop() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.edit { $0[raw: "http.workers"] = 4 }
        let seen = try await watchWorkers(
            through: ConfigReader(provider: PreferencesProvider(store: store)),
            changingThemWith: ["--file", file.path])
        #expect(seen == [4, 8])
    }

    @Test(.enabled(if: TestEtcd.isInstalled, "needs etcd"))
    func aPrefsSetThroughEtcdReachesAWatchIntLoop() async throws {
        let etcd = try await TestEtcd()
        defer { etcd.stop() }
        let store = try await PreferencesStore(etcd: etcd.configuration, key: "/prefs/service")
        try await store.edit { $0[raw: "http.workers"] = 4 }
        let seen = try await watchWorkers(
            through: ConfigReader(provider: PreferencesProvider(store: store)),
            changingThemWith: ["--etcd", etcd.endpoint, "--key", "/prefs/service"])
        #expect(seen == [4, 8])
    }

    @Test func aWatchYieldsOnlyWhenItsKeysValueChanges() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.workers"] = 4 }
        let provider = PreferencesProvider(store: store)
        let seen = try await withDeadline(.seconds(30)) { progress in
            try await provider.watchValue(forKey: "http.workers", type: .int) { updates in
                var iterator = updates.makeAsyncIterator()
                var seen: [Update] = []
                progress.waiting(for: "the watch's first value")
                seen.append(Update(try await iterator.next()))
                // A write in this process reaches the feed before it returns.
                try await store.edit { $0[raw: "http.workers"] = 8 }
                progress.waiting(for: "the watch to yield 8 (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                try await store.edit { $0.remove("http.workers") }
                progress.waiting(for: "the watch to yield the removal (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                // A change of another key, then the end of the store's feeds:
                // the watch must end without yielding for that change.
                try await store.edit { $0[raw: "log.level"] = "debug" }
                await store.close()
                progress.waiting(for: "the watch to end once the store closed (seen: \(seen))")
                seen.append(Update(try await iterator.next()))
                return seen
            }
        }
        #expect(seen == [.value(.int(4)), .value(.int(8)), .absent, .ended])
    }

    @Test func fetchValueReadsAChangeTheStoreHasNotNoticed() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        // On a backend that cannot watch, the store sees another process's
        // write only when it re-reads.
        let store = try await PreferencesStore(
            storage: GatedStorage(fileURL: file, watches: false), liveReads: false)
        try await store.edit { $0[raw: "http.workers"] = 4 }
        let provider = PreferencesProvider(store: store)
        // A feed re-reads the store as it starts: the provider's own two
        // start before the other process writes.
        try await eventually("the provider's feeds to start") {
            store.activity.feedSubscribers >= 2
        }
        try await withDeadline(.seconds(60)) { progress in
            progress.waiting(for: "`prefs set http.workers 8` to end")
            try await prefs("--file", file.path, "set", "http.workers", "8")
        }
        let cached = try provider.value(forKey: ["http", "workers"], type: .int)
        let fetched = try await provider.fetchValue(forKey: ["http", "workers"], type: .int)
        #expect(cached.value?.content == .int(4))
        #expect(fetched.value?.content == .int(8))
        #expect(fetched.encodedKey == "http.workers")
    }

    /// Watches `http.workers` through `config`: once it reads 4, runs
    /// `prefs GLOBAL-OPTIONS set http.workers 8` and waits for the watch to
    /// yield 8. Returns the values the watch yielded.
    private func watchWorkers(
        through config: ConfigReader, changingThemWith globalOptions: [String]
    ) async throws -> [Int] {
        try await withDeadline(.seconds(90)) { progress in
            try await config.watchInt(forKey: "http.workers", default: 1) { updates in
                var seen: [Int] = []
                progress.waiting(for: "the watch's first value")
                for await workers in updates {
                    seen.append(workers)
                    if workers == 8 { break }
                    guard workers == 4 else { continue }
                    progress.waiting(for: "`prefs set http.workers 8` to end")
                    try await prefs(globalOptions + ["set", "http.workers", "8"])
                    progress.waiting(
                        for: "the watch to yield 8 after `prefs set` returned (seen: \(seen))")
                }
                return seen
            }
        }
    }
}
