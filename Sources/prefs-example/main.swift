// prefs-example: a small settings-driven service.
//
// It shows the whole flow of the library:
//   1. at start-up, migrate: import an old `example.properties` file (one is
//      written beside the store on the first run, so there is something to
//      import) and apply a versioned step;
//   2. read typed settings synchronously;
//   3. react to changes made from the shell while it runs:
//        swift run prefs --suite example set greeting Bonjour
//        swift run prefs --suite example set interval_ms 250
//        swift run prefs --suite example set paused true
//
//   swift run prefs-example [--seconds N]   (default 60; Ctrl-C stops it sooner)
import Dispatch
import Foundation
import Preferences

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

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
var seconds = 60.0
if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count,
    let value = Double(arguments[index + 1])
{
    seconds = value
}

// 1. Where the store lives, and an old settings file to migrate from.
let storeURL = try PreferencesLocation.fileURL(suite: "example")
let legacyURL = storeURL.deletingLastPathComponent().appendingPathComponent("example.properties")
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

let store = try await PreferencesStore(
    fileURL: storeURL,
    migrations: [
        // Import the old file once; it is renamed to example.properties.migrated.
        LegacyImport(
            .properties, at: legacyURL, keys: .prefix("service.", removingPrefix: true),
            renames: ["service.interval": "interval_ms"], types: [.intervalMilliseconds, .paused]),
        // Version 1 of our data: the audience became its own key.
        VersionedMigration(version: 1) { prefs in
            if prefs[.audience] == "world" { prefs[.audience] = "operators" }
        },
    ])
say("store: \(store.location) (data version \(store.snapshot.version))")

// 2. Typed reads, synchronous.
say(
    "greeting=\(store[.greeting]) interval_ms=\(store[.intervalMilliseconds]) paused=\(store[.paused])"
)
say("change me from another shell, for example:")
say("  swift run prefs --suite example set greeting Bonjour")

// 3. React to changes for a while, then stop.
let stop = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
signal(SIGINT, SIG_IGN)
let worker = Task {
    // The service loop: reads its settings on every tick.
    var tick = 0
    while !Task.isCancelled {
        if !store[.paused] {
            tick += 1
            say("[\(tick)] \(store[.greeting]), \(store[.audience])!")
        }
        try? await Task.sleep(for: .milliseconds(max(50, store[.intervalMilliseconds])))
    }
}
let watcher = Task {
    for await snapshot in store.changes() {
        let values = snapshot.storedKeys.map { "\($0)=\(snapshot.values[$0]!.jsonText)" }
        say("settings now: \(values.joined(separator: " "))")
    }
}
stop.setEventHandler {
    worker.cancel()
    watcher.cancel()
}
stop.resume()
try? await Task.sleep(for: .seconds(seconds))
worker.cancel()
watcher.cancel()
say("stopping")
