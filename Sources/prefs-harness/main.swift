import Dispatch
import Preferences
import PreferencesEtcd

// A child process for the test suite and the reliability harnesses: each
// command drives the library the way a real service would, in its own
// process, so tests can kill it, race it, or read what it acknowledged.
//
//   prefs-harness set FILE KEY INT          set, print "ok", then wait to be killed
//   prefs-harness increment FILE KEY N      N read-modify-write increments via edit
//   prefs-harness write-loop FILE KEY       set KEY = 1, 2, 3 … forever, printing "ack N"
//   prefs-harness watch FILE KEY N          print the first N values of KEY's feed, one per line
//   prefs-harness record-increment FILE N   N increments of HarnessRecord.counter via RecordStore.update
//   prefs-harness migrate FILE LEGACY [rename|remove]
//                                           print "opening", open with the migrations below, print "done";
//                                           with PREFS_HARNESS_CRASH_AT=before-commit or
//                                           =between-commit-and-clean-up it kills itself (SIGKILL)
//                                           at that point of the migration
//   prefs-harness set-once FILE KEY INT     set, print "ok", exit
//   prefs-harness hold-lock FILE            take FILE's lock, print "locked", hold it until stdin closes
//   prefs-harness serve FILE                one store with live reads off (its memory changes
//                                           only through its own writes, so a fault test sees
//                                           what a failed write left), driven by stdin lines:
//                                             "set KEY INT" -> "ok" | "error io CODE …" | "error …"
//                                             "get KEY"     -> "value INT"
//   prefs-harness read-loop FILE KEY        print "ready V", then read KEY on a loop (no feed, no
//                                           reload), printing "seen V UPTIME_NS" on each change
//   prefs-harness many-stores DIR N M [feeds]
//                                           open N stores in M directories under DIR (each with
//                                           an unread change feed if asked), print "inotify I
//                                           threads T", then read key "counter" of every store
//                                           on a loop, printing "seen INDEX V" on each change
//   prefs-harness churn DIR N               open N stores one after another, each with a feed
//                                           read once, dropping each; print "inotify I threads T"
//   prefs-harness replica FILE MAX [unregistered]
//                                           a replica: open with live reads, declare interval_ms
//                                           (an int of at most MAX), print "ready", and keep the
//                                           store open until killed ($PREFS_PROGRAM names it);
//                                           unregistered: live reads off and a change feed instead,
//                                           so it follows every change without registering
//   prefs-harness maps FILE                 a service on files: open FILE's store, set a key,
//                                           and print the lines of /proc/self/maps
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
        switch arguments[0] {
        case "set":
            let store = try await openStore(url)
            let key = PreferenceKey<Int>(arguments[2], default: 0)
            try await store.set(key, Int(arguments[3])!)
            say("ok")
            while true { try await Task.sleep(for: .seconds(60)) }
        case "increment":
            let store = try await openStore(url)
            let key = PreferenceKey<Int>(arguments[2], default: 0)
            for _ in 0..<Int(arguments[3])! {
                try await store.edit { $0[key] += 1 }
            }
            say("done")
        case "write-loop":
            let store = try await openStore(url)
            let key = PreferenceKey<Int>(arguments[2], default: 0)
            var next = store[key] + 1
            while true {
                try await store.set(key, next)
                say("ack \(next)")
                next += 1
            }
        case "watch":
            let store = try await openStore(url)
            let key = PreferenceKey<Int>(arguments[2], default: 0)
            var remaining = Int(arguments[3])!
            for await value in store.changes(key) {
                say("\(value)")
                remaining -= 1
                if remaining == 0 { break }
            }
        case "record-increment":
            let settings = try await RecordStore<HarnessRecord>(fileURL: url)
            for _ in 0..<Int(arguments[2])! {
                try await settings.update { $0.counter += 1 }
            }
            say("done")
        case "migrate":
            // The same list the migration crash test runs in process: two
            // versioned steps on the store's own keys, then a properties import.
            let cleanUp: LegacyImport.SourceCleanUp =
                arguments.count > 3 && arguments[3] == "remove" ? .remove : .rename
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
                        .properties, at: URL(fileURLWithPath: arguments[2]),
                        keys: .prefix("app.", removingPrefix: true), types: ["dark_mode": .bool],
                        afterImport: cleanUp),
                    crashes: crashAt == CrashPoint.betweenCommitAndCleanUp.rawValue),
            ]
            if crashAt == CrashPoint.beforeCommit.rawValue { migrations.append(CrashStep()) }
            say("opening")
            _ = try await openStore(url, migrations: migrations)
            say("done")
        case "maps":
            let store = try await openStore(url)
            try await store.set(PreferenceKey<Int>("counter", default: 0), 1)
            say(String(decoding: try readWholeFile("/proc/self/maps"), as: UTF8.self))
        case "set-once":
            let store = try await openStore(url)
            try await store.set(PreferenceKey<Int>(arguments[2], default: 0), Int(arguments[3])!)
            say("ok")
        case "hold-lock":
            let storage = FileStorage(fileURL: url)
            try storage.withExclusiveAccess {
                say("locked")
                while Swift.readLine() != nil {}
            }
        case "serve":
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
        case "replica":
            // "unregistered": the same reloads through a change feed, with
            // live reads off, so the process does not register (P11's baseline).
            let unregistered = arguments.count > 3 && arguments[3] == "unregistered"
            let store = try await openStore(url, liveReads: !unregistered)
            let maximum = Int(arguments[2]) ?? 100
            let declared =
                #"{"format": 1, "keys": {"interval_ms": {"type": "int", "default": 10, "maximum": "#
                + "\(maximum)}}}"
            await store.declare(try PreferencesManifest(jsonText: declared))
            let feed = unregistered ? store.changes() : nil
            let following = Task { if let feed { for await _ in feed {} } }
            await store.registeredAsReplica()
            say("ready")
            while true { try await Task.sleep(for: .seconds(3600)) }
            following.cancel()
            withExtendedLifetime(store) {}
        case "read-loop":
            let store = try await PreferencesStore(fileURL: url)
            readLoop([store], key: PreferenceKey<Int>(arguments[2], default: 0), stamped: true)
        case "many-stores":
            let stores = try await openMany(
                in: url, count: Int(arguments[2])!, directories: Int(arguments[3])!)
            let feeds = arguments.count > 4 && arguments[4] == "feeds"
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
        case "churn":
            for index in 0..<Int(arguments[2])! {
                let store = try await PreferencesStore(
                    fileURL: url.appendingPathComponent("store-\(index).json"))
                var feed = store.changes().makeAsyncIterator()
                _ = await feed.next()
            }
            say("inotify \(ProcessCensus.inotifyInstances()) threads \(ProcessCensus.threads())")
        default:
            StandardStream.error.write("prefs-harness: unknown command \(arguments[0])\n")
            exit(2)
        }
    }
}

extension Harness {
    /// Opens `count` stores spread over `directories` directories under `root`.
    static func openMany(in root: URL, count: Int, directories: Int) async throws
        -> [PreferencesStore]
    {
        var stores: [PreferencesStore] = []
        for index in 0..<count {
            let directory = root.appendingPathComponent("dir-\(index % directories)")
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true)
            stores.append(
                try await PreferencesStore(
                    fileURL: directory.appendingPathComponent("store-\(index).json")))
        }
        return stores
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
