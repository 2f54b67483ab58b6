import Dispatch
import Preferences
import PreferencesEtcd

// A child process for the test suite and the reliability harnesses: each
// command drives the library the way a real service would, in its own
// process, so tests can kill it, race it, or read what it acknowledged.
// `prefs-harness COMMAND FILE …` runs the function of the command's name
// below, whose comment gives its arguments and what it prints.
//
// With PREFS_HARNESS_ETCD=ENDPOINTS in the environment, FILE is an etcd key
// and every store command runs against that cluster instead of a file
// (PREFS_HARNESS_REPLICA_TTL=SECONDS sets the replicas' lease TTL).
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

@main
struct Harness {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            try await run(arguments)
        } catch {
            StandardStream.error.write("prefs-harness: \(error)\n")
            exit(1)
        }
    }

    static func say(_ line: String) {
        StandardStream.output.write(line + "\n")
    }

    static func run(_ arguments: [String]) async throws {
        guard arguments.count >= 2 else {
            StandardStream.error.write("usage: prefs-harness COMMAND FILE …\n")
            exit(2)
        }
        let url = URL(fileURLWithPath: arguments[1])
        let word = { (index: Int) in arguments.count > index ? arguments[index] : nil }
        switch arguments[0] {
        case "set", "set-once":
            try await set(url, arguments[2], to: Int(arguments[3])!)
            if arguments[0] == "set" { while true { try await Task.sleep(for: .seconds(60)) } }
        case "increment": try await increment(url, arguments[2], times: Int(arguments[3])!)
        case "write-loop": try await writeLoop(url, arguments[2])
        case "watch": try await watch(url, arguments[2], count: Int(arguments[3])!)
        case "record-increment": try await recordIncrement(url, times: Int(arguments[2])!)
        case "migrate":
            try await migrate(
                url, legacy: arguments[2], cleanUp: word(3) == "remove" ? .remove : .rename)
        case "maps": try await maps(url)
        case "hold-lock": try holdLock(url)
        case "serve": try await serve(url)
        case "replica":
            try await replica(
                url, maximum: Int(arguments[2]) ?? 100, unregistered: word(3) == "unregistered")
        case "read-loop": try await readLoop(url, arguments[2])
        case "many-stores":
            try await manyStores(
                in: url, count: Int(arguments[2])!, directories: Int(arguments[3])!,
                feeds: word(4) == "feeds")
        case "churn": try await churn(in: url, count: Int(arguments[2])!)
        default:
            StandardStream.error.write("prefs-harness: unknown command \(arguments[0])\n")
            exit(2)
        }
    }
}

extension Harness {
    /// `set FILE KEY INT`: set, print "ok", then (`set`) wait to be killed or
    /// (`set-once`) exit.
    static func set(_ url: URL, _ name: String, to value: Int) async throws {
        let store = try await openStore(url)
        try await store.set(PreferenceKey<Int>(name, default: 0), value)
        say("ok")
    }

    /// `increment FILE KEY N`: N read-modify-write increments via edit.
    static func increment(_ url: URL, _ name: String, times: Int) async throws {
        let store = try await openStore(url)
        let key = PreferenceKey<Int>(name, default: 0)
        for _ in 0..<times {
            try await store.edit { $0[key] += 1 }
        }
        say("done")
    }

    /// `write-loop FILE KEY`: set KEY = 1, 2, 3 … forever, printing "ack N".
    static func writeLoop(_ url: URL, _ name: String) async throws {
        let store = try await openStore(url)
        let key = PreferenceKey<Int>(name, default: 0)
        var next = store[key] + 1
        while true {
            try await store.set(key, next)
            say("ack \(next)")
            next += 1
        }
    }

    /// `watch FILE KEY N`: print the first N values of KEY's feed, one per line.
    static func watch(_ url: URL, _ name: String, count: Int) async throws {
        let store = try await openStore(url)
        var remaining = count
        for await value in store.changes(PreferenceKey<Int>(name, default: 0)) {
            say("\(value)")
            remaining -= 1
            if remaining == 0 { break }
        }
    }

    /// `record-increment FILE N`: N increments of HarnessRecord.counter via
    /// RecordStore.update.
    static func recordIncrement(_ url: URL, times: Int) async throws {
        let settings = try await RecordStore<HarnessRecord>(fileURL: url)
        for _ in 0..<times {
            try await settings.update { $0.counter += 1 }
        }
        say("done")
    }

    /// `migrate FILE LEGACY [rename|remove]`: print "opening", open with the
    /// migrations below, print "done". With PREFS_HARNESS_CRASH_AT set to a
    /// ``CrashPoint`` it kills itself (SIGKILL) at that point of the migration.
    static func migrate(_ url: URL, legacy: String, cleanUp: LegacyImport.SourceCleanUp)
        async throws
    {
        // The same list the migration crash test runs in process: two
        // versioned steps on the store's own keys, then a properties import.
        let crashAt = ProcessInfo.processInfo.environment["PREFS_HARNESS_CRASH_AT"]
        guard crashAt == nil || CrashPoint.allCases.map(\.rawValue).contains(crashAt!) else {
            StandardStream.error.write(
                "prefs-harness: unknown PREFS_HARNESS_CRASH_AT \(crashAt!)\n")
            exit(2)
        }
        var migrations: [any PreferencesMigration] = [
            VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
            VersionedMigration(version: 2, .retype("map_zoom", as: .double)),
            CrashBeforeCleanUp(
                wrapped: LegacyImport(
                    .properties, at: URL(fileURLWithPath: legacy),
                    keys: .prefix("app.", removingPrefix: true), types: ["dark_mode": .bool],
                    afterImport: cleanUp),
                crashes: crashAt == CrashPoint.betweenCommitAndCleanUp.rawValue),
        ]
        if crashAt == CrashPoint.beforeCommit.rawValue { migrations.append(CrashStep()) }
        say("opening")
        _ = try await openStore(url, migrations: migrations)
        say("done")
    }

    /// `maps FILE`: a service on files: open FILE's store, set a key, and
    /// print the lines of /proc/self/maps.
    static func maps(_ url: URL) async throws {
        let store = try await openStore(url)
        try await store.set(PreferenceKey<Int>("counter", default: 0), 1)
        say(String(decoding: try readWholeFile("/proc/self/maps"), as: UTF8.self))
    }

    /// `hold-lock FILE`: take FILE's lock, print "locked", hold it until
    /// stdin closes.
    static func holdLock(_ url: URL) throws {
        try FileStorage(fileURL: url).withExclusiveAccess {
            say("locked")
            while Swift.readLine() != nil {}
        }
    }

    /// `serve FILE`: one store with live reads off (its memory changes only
    /// through its own writes, so a fault test sees what a failed write
    /// left), driven by stdin lines:
    ///
    ///     "set KEY INT" -> "ok" | "error io CODE …" | "error …"
    ///     "get KEY"     -> "value INT"
    static func serve(_ url: URL) async throws {
        let store = try await openStore(url, liveReads: false)
        say("ready")
        while let line = Swift.readLine() {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 2 else { continue }
            let key = PreferenceKey<Int>(words[1], default: 0)
            if words[0] == "get" {
                say("value \(store[key])")
                continue
            }
            do {
                try await store.set(key, Int(words[2])!)
                say("ok")
            } catch let error as PreferencesError {
                if case .io(_, _, let code, _) = error {
                    say("error io \(code) \(error)")
                } else {
                    say("error \(error)")
                }
            } catch {
                say("error \(error)")
            }
        }
    }

    /// `replica FILE MAX [unregistered]`: a replica: open with live reads,
    /// declare interval_ms (an int of at most MAX), print "ready", and keep
    /// the store open until killed ($PREFS_PROGRAM names it). SIGTERM
    /// closes the store, prints "closed" and exits 0, as a service does.
    /// `unregistered`: live reads off and a change feed instead, so it
    /// follows every change without registering (P11's baseline).
    static func replica(_ url: URL, maximum: Int, unregistered: Bool) async throws {
        let store = try await openStore(url, liveReads: !unregistered)
        let declared =
            #"{"format": 1, "keys": {"interval_ms": {"type": "int", "default": 10, "maximum": "#
            + "\(maximum)}}}"
        await store.declare(try PreferencesManifest(jsonText: declared))
        let feed = unregistered ? store.changes() : nil
        let following = Task { if let feed { for await _ in feed {} } }
        signal(SIGTERM, SIG_IGN)
        let terminate = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        terminate.setEventHandler {
            Task {
                await store.close()
                say("closed")
                exit(0)
            }
        }
        terminate.resume()
        await store.registeredAsReplica()
        say("ready")
        while true { try await Task.sleep(for: .seconds(3600)) }
        following.cancel()
        withExtendedLifetime(store) {}
    }

    /// `read-loop FILE KEY`: print "ready V", then read KEY on a loop (no
    /// feed, no reload), printing "seen V UPTIME_NS" on each change.
    static func readLoop(_ url: URL, _ name: String) async throws {
        let store = try await PreferencesStore(fileURL: url)
        readLoop([store], key: PreferenceKey<Int>(name, default: 0), stamped: true)
    }

    /// `many-stores DIR N M [feeds]`: open N stores in M directories under
    /// DIR (each with an unread change feed if asked), print "inotify I
    /// threads T", then read key "counter" of every store on a loop,
    /// printing "seen INDEX V" on each change.
    static func manyStores(in root: URL, count: Int, directories: Int, feeds: Bool) async throws {
        var stores: [PreferencesStore] = []
        for index in 0..<count {
            let directory = root.appendingPathComponent("dir-\(index % directories)")
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true)
            stores.append(
                try await PreferencesStore(
                    fileURL: directory.appendingPathComponent("store-\(index).json")))
        }
        var streams: [AsyncStream<PreferencesSnapshot>] = []
        if feeds {
            for store in stores {
                let stream = store.changes()
                var iterator = stream.makeAsyncIterator()
                _ = await iterator.next()
                streams.append(stream)
            }
        }
        say("inotify \(ProcessCensus.inotifyInstances()) threads \(ProcessCensus.threads())")
        readLoop(stores, key: PreferenceKey<Int>("counter", default: 0), stamped: false)
    }

    /// `churn DIR N`: open N stores one after another, each with a feed read
    /// once, dropping each; print "inotify I threads T".
    static func churn(in root: URL, count: Int) async throws {
        for index in 0..<count {
            let store = try await PreferencesStore(
                fileURL: root.appendingPathComponent("store-\(index).json"))
            var feed = store.changes().makeAsyncIterator()
            _ = await feed.next()
        }
        say("inotify \(ProcessCensus.inotifyInstances()) threads \(ProcessCensus.threads())")
    }

    /// Reads `key` of every store on a loop, as a service does on each
    /// request, and prints each change it sees. Never returns.
    static func readLoop(_ stores: [PreferencesStore], key: PreferenceKey<Int>, stamped: Bool)
        -> Never
    {
        var last = stores.map { $0[key] }
        if stamped { say("ready \(last[0])") }
        while true {
            for (index, store) in stores.enumerated() {
                let value = store[key]
                guard value != last[index] else { continue }
                last[index] = value
                if stamped {
                    say("seen \(value) \(DispatchTime.now().uptimeNanoseconds)")
                } else {
                    say("seen \(index) \(value)")
                }
            }
            usleep(200)
        }
    }
}

/// What the process holds, from /proc/self (Linux).
enum ProcessCensus {
    /// Open inotify instances.
    static func inotifyInstances() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
                == "anon_inode:inotify"
        }.count
    }

    /// Threads of the process.
    static func threads() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
    }
}

/// The store at `url`: the file, or with `PREFS_HARNESS_ETCD` set, the etcd key `url.path`.
func openStore(
    _ url: URL, migrations: [any PreferencesMigration] = [], liveReads: Bool = true
) async throws -> PreferencesStore {
    if let endpoints = ProcessInfo.processInfo.environment["PREFS_HARNESS_ETCD"] {
        var cluster = try EtcdConfiguration(endpoints: endpoints, timeout: 10)
        if let ttl = ProcessInfo.processInfo.environment["PREFS_HARNESS_REPLICA_TTL"].flatMap(
            Double.init)
        {
            cluster.replicaTTL = ttl
        }
        return try await PreferencesStore(etcd: cluster, key: url.path, migrations: migrations)
    }
    return try await PreferencesStore(fileURL: url, migrations: migrations, liveReads: liveReads)
}

/// The record `record-increment` updates (the tests declare the same fields).
struct HarnessRecord: PreferencesRecord {
    var counter = 0
    var label = "harness"
}

/// The named moments of a migration at which `migrate` can kill itself.
enum CrashPoint: String, CaseIterable {
    /// Every step has run on the working copy; nothing is written yet.
    case beforeCommit = "before-commit"
    /// The migrated file is durable; the legacy source is not yet cleaned up.
    case betweenCommitAndCleanUp = "between-commit-and-clean-up"
}

/// Dies with SIGKILL, the way a crash or `kill -9` ends a process.
func dieNow() -> Never {
    kill(getpid(), SIGKILL)
    while true { pause() }
}

/// A last step that kills the process once every step before it has run,
/// inside the store's exclusive access, before the commit.
struct CrashStep: PreferencesMigration {
    var name: String { "crash before commit" }
    func shouldMigrate(_ current: PreferencesSnapshot) throws -> Bool { true }
    func migrate(_ preferences: inout MutablePreferences) throws { dieNow() }
}

/// `wrapped`, killing the process when its clean-up starts (after the
/// commit) if `crashes`.
struct CrashBeforeCleanUp: PreferencesMigration {
    let wrapped: LegacyImport
    let crashes: Bool
    var name: String { wrapped.name }
    func shouldMigrate(_ current: PreferencesSnapshot) throws -> Bool {
        try wrapped.shouldMigrate(current)
    }
    func migrate(_ preferences: inout MutablePreferences) throws {
        try wrapped.migrate(&preferences)
    }
    func cleanUp() throws {
        if crashes { dieNow() }
        try wrapped.cleanUp()
    }
}
