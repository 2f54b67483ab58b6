import Dispatch
import Preferences
import PreferencesEtcd

// prefs-example: a small settings-driven service.
//
// It shows the whole flow of the library:
//   1. at start-up, migrate: import an old `example.properties` file (one is
//      written beside the store on the first run, so there is something to
//      import) and apply a versioned step;
//   2. declare its keys, so the store publishes them beside its file
//      (example.keys.json) and `prefs` types, validates and shows defaults
//      as this service reads them;
//   3. read typed settings synchronously, on every tick: a change made from
//      another shell while it runs shows up on the next tick, with who made it:
//        swift run prefs --suite example set greeting Bonjour
//        sudo prefs --suite example set interval_ms 250
//        swift run prefs --suite example list --long
//
//   swift run prefs-example [--seconds N]   (default 60; Ctrl-C or SIGTERM stops it sooner)
//   swift run prefs-example --etcd http://127.0.0.1:2379   (the suite in etcd, /prefs/example)
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PreferenceKeys {
    static let greeting = PreferenceKey<String>(
        "greeting", default: "Hello", help: "What the service says on each tick.")
    static let intervalMilliseconds = PreferenceKey<Int>(
        "interval_ms", default: 1000, help: "Time between ticks, in milliseconds.")
    static let paused = PreferenceKey<Bool>(
        "paused", default: false, help: "When true the service stays idle.")
    static let audience = PreferenceKey<String>(
        "audience", default: "world", help: "Who the greeting is for.")
}

/// Prints `line` at once, even when standard output is a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

let arguments = CommandLine.arguments
var seconds = 60.0
if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count,
    let value = Double(arguments[index + 1])
{
    seconds = value
}
var etcdEndpoints: String?
if let index = arguments.firstIndex(of: "--etcd"), index + 1 < arguments.count {
    etcdEndpoints = arguments[index + 1]
}
let keys: [PreferenceKeys] = [.greeting, .intervalMilliseconds, .paused, .audience]
// Version 1 of our data: the audience became its own key.
let audienceStep = VersionedMigration(version: 1) { prefs in
    if prefs[.audience] == "world" { prefs[.audience] = "operators" }
}

// 1. Where the store lives, and an old settings file to migrate from. A
// store that cannot be opened (corrupt, unreadable, a migration that
// fails) ends the service with one line naming it, and status 1.
let store: PreferencesStore
do {
    if let etcdEndpoints {
        // In etcd there is no old file to import; the keys are declared once open.
        store = try await PreferencesStore(
            etcd: EtcdConfiguration(endpoints: etcdEndpoints), suite: "example",
            migrations: [audienceStep])
        await store.declare(try PreferencesManifest(keys: keys))
    } else {
        store = try await openFileStore()
    }
} catch {
    StandardStream.error.write("prefs-example: \(error)\n")
    exit(EXIT_FAILURE)
}

func openFileStore() async throws -> PreferencesStore {
    let storeURL = try PreferencesLocation.fileURL(suite: "example")
    let legacyURL = storeURL.deletingLastPathComponent().appendingPathComponent(
        "example.properties")
    if !FileManager.default.fileExists(atPath: storeURL.path),
        !FileManager.default.fileExists(atPath: legacyURL.path + ".migrated")
    {
        try FileManager.default.createDirectory(
            at: legacyURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        let legacy = """
            # settings of the old version of this service
            service.greeting = Hi there
            service.interval = 750
            service.paused = false
            unrelated.key = not imported

            """
        try Data(legacy.utf8).write(to: legacyURL)
        say("wrote an old-style settings file to migrate: \(legacyURL.path)")
    }
    return try await PreferencesStore(
        fileURL: storeURL,
        migrations: [
            // Import the old file once; it is renamed to example.properties.migrated.
            LegacyImport(
                .properties, at: legacyURL, keys: .prefix("service.", removingPrefix: true),
                renames: ["service.interval": "interval_ms"],
                types: [.intervalMilliseconds, .paused]),
            audienceStep,
        ],
        declaring: keys)
}
// Registered as a replica before saying so, for `prefs replicas` and `--wait`.
await store.registeredAsReplica()
say("store: \(store.location) (data version \(store.snapshot.version))")

// 2. Typed reads, synchronous.
say(
    "greeting=\(store[.greeting]) interval_ms=\(store[.intervalMilliseconds]) paused=\(store[.paused])"
)
say("change me from another shell, for example:")
say("  swift run prefs --suite example set greeting Bonjour")

// 3. The service loop: reads its settings on every tick, as a service reads
// a flag on every request. No change feed is needed to see changes made by
// other processes; when a setting differs from the last tick, say who
// changed it.
let end = ContinuousClock.now + .seconds(seconds)
let worker = Task {
    var tick = 0
    var seen = store.snapshot.values
    while !Task.isCancelled && ContinuousClock.now < end {
        let snapshot = store.snapshot
        for key in Set(seen.keys).union(snapshot.values.keys).sorted()
        where seen[key] != snapshot.values[key] {
            let change = snapshot.modification(forKey: key).map { " (\($0))" } ?? ""
            let now = snapshot.values[key]?.jsonText ?? "its default"
            say("\(key) is now \(now)\(change)")
        }
        seen = snapshot.values
        if !store[.paused] {
            tick += 1
            say("[\(tick)] \(store[.greeting]), \(store[.audience])!")
        }
        let pause = Duration.milliseconds(max(50, store[.intervalMilliseconds]))
        try? await Task.sleep(for: min(pause, end - ContinuousClock.now))
    }
}
// 4. Stop gracefully on Ctrl-C, or on the SIGTERM a service manager sends:
// finish the tick, then close the store, which waits for its writes and
// takes this process off `prefs replicas` before it exits.
let stops = [SIGINT, SIGTERM].map { number in
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
    source.setEventHandler { worker.cancel() }
    source.resume()
    return source
}
await worker.value
say("stopping")
await store.close()
