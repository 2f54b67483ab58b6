import Foundation
import Preferences
import PreferencesEtcd
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `ServiceGroup` holding a store's service, in a child process
/// (`preferences-service-harness`), stopped with SIGTERM: it exits 0, `prefs
/// replicas` no longer lists it the moment it has exited, and a `prefs set
/// --wait` waiting for it then ends at once — on a file and on etcd, where
/// the child's registration lease lasts 10 minutes, so only its close
/// removes it in time.
@Suite(.serialized) struct GracefulEndTests {
    /// Where a test's store is: `prefs`' global options, and the harness's arguments.
    struct Target {
        var options: [String]
        var harness: [String]
        /// A handle on the same store in this process, with no live reads
        /// (so not a replica itself).
        var open: @Sendable () async throws -> PreferencesStore
    }

    static func fileTarget(_ directory: TemporaryDirectory) -> Target {
        let file = directory.file("service.json")
        return Target(
            options: ["--file", file.path], harness: ["file", file.path],
            open: { try await PreferencesStore(fileURL: file, liveReads: false) })
    }

    static func etcdTarget(_ etcd: TestEtcd) throws -> Target {
        let configuration = try etcd.configuration
        return Target(
            options: ["--etcd", etcd.endpoint, "--key", "/prefs/service"],
            harness: ["etcd", etcd.endpoint, "/prefs/service"],
            open: {
                try await PreferencesStore(
                    etcd: configuration, key: "/prefs/service", liveReads: false)
            })
    }

    @Test func onAFileSIGTERMEndsTheGroupWithStatusZeroAndItsRegistration() async throws {
        let directory = try TemporaryDirectory()
        try await stopsCleanly(Self.fileTarget(directory))
    }

    @Test(.enabled(if: TestEtcd.isInstalled, "needs etcd"))
    func onEtcdSIGTERMEndsTheGroupWithStatusZeroAndItsRegistration() async throws {
        let etcd = try await TestEtcd()
        defer { etcd.stop() }
        try await stopsCleanly(Self.etcdTarget(etcd))
    }

    @Test func onAFileAWaitRunningAtSIGTERMEndsAtOnce() async throws {
        let directory = try TemporaryDirectory()
        try await endsTheWait(Self.fileTarget(directory))
    }

    @Test(.enabled(if: TestEtcd.isInstalled, "needs etcd"))
    func onEtcdAWaitRunningAtSIGTERMEndsAtOnce() async throws {
        let etcd = try await TestEtcd()
        defer { etcd.stop() }
        try await endsTheWait(Self.etcdTarget(etcd))
    }

    /// A replica that cannot read the change (its file made unreadable to
    /// its user while it was stopped) never applies it: the wait can only
    /// end by seeing it go.
    @Test(
        .enabled(
            if: canRunAsAnotherUser,
            "runs the replica as another user (nobody), which needs root and setpriv"))
    func onAFileAWaitForAReplicaThatCannotApplyTheChangeReportsItGoneAtSIGTERM() async throws {
        let directory = try TemporaryDirectory()
        let home = directory.file("state")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        #expect(chown(home.path, serviceUser, serviceUser) == 0)
        let file = home.appendingPathComponent("service.json")
        let target = Target(
            options: ["--file", file.path], harness: ["file", file.path],
            open: { try await PreferencesStore(fileURL: file, liveReads: false) })
        try await endsTheWait(target, as: serviceUser) {
            #expect(chmod(file.path, 0) == 0)
        }
    }

    /// Starts the harness on `target`, checks that it is listed, stops it
    /// with SIGTERM, and checks that it exits 0 and is no longer listed.
    func stopsCleanly(_ target: Target) async throws {
        let child = try await startHarness(target)
        #expect(try await replicaPIDs(target) == [child.pid])
        child.send(SIGTERM)
        #expect(try await child.exit() == RunningChild.Exit(status: 0, bySignal: false))
        #expect(child.lines(.output) == ["ready", "closed"], "\(child.printed)")
        #expect(try await replicaPIDs(target) == [], "listed after it exited")
    }

    /// Stops the harness, starts `prefs set --wait 600s` and waits until it
    /// waits for the stopped replica; then sends SIGTERM and lets the
    /// harness go on. The wait must end within seconds, having seen the
    /// replica go, or apply the change just before it closed.
    ///
    /// With `user`, the harness runs as that user, and `beforeResuming`
    /// runs once the wait has started; the wait must then report the
    /// replica gone.
    func endsTheWait(
        _ target: Target, as user: UInt32? = nil,
        beforeResuming: @Sendable () throws -> Void = {}
    ) async throws {
        let child = try await startHarness(target, as: user)
        let store = try await target.open()
        let key = PreferenceKey<Int>("interval_ms", default: 0)
        let feed = store.changes(key)
        child.send(SIGSTOP)
        let waiter = try RunningChild(
            productURL("prefs"), target.options + ["set", "interval_ms", "80", "--wait", "600s"],
            environment: childEnvironment())
        try await withDeadline(.seconds(30), progress: named("the waiter's write of 80")) { _ in
            for await value in feed where value == 80 { return }
            throw CancellationError()
        }
        // Had it listed no replica, it would end at once; it waits for the
        // stopped one instead.
        await #expect(throws: ChildWaitFailed.self, "the wait ended with a replica stopped") {
            let exit = try await waiter.exit(within: .seconds(1))
            Issue.record("the waiter ended (\(exit)) with the replica stopped: \(waiter.printed)")
        }
        try beforeResuming()
        child.send(SIGTERM)
        child.send(SIGCONT)
        #expect(try await child.exit() == RunningChild.Exit(status: 0, bySignal: false))
        #expect(try await waiter.exit() == RunningChild.Exit(status: 0, bySignal: false))
        let lines = waiter.lines(.output)
        let gone = [
            "replica \(hostName())/\(child.pid) (preferences-service-harness) has gone"
        ]
        let reportedGone =
            Array(lines.dropLast()) == gone
            && lines.last?.hasPrefix("applied on 0/0 replicas") == true
        // Resumed, a replica that can read the change may apply it before it closes.
        let applied =
            user == nil && lines.count == 1 && lines[0].hasPrefix("applied on 1/1 replicas")
        #expect(reportedGone || applied, "the wait said \(lines); \(waiter.printed)")
        print("a wait on a replica stopped by SIGTERM said: \(lines)")
        #expect(try await replicaPIDs(target) == [], "listed after it exited")
        await store.close()
    }

    /// Starts the harness on `target` (as `user`) and waits for its "ready": registered
    /// as a replica, and SIGTERM trapped by its group.
    func startHarness(_ target: Target, as user: UInt32? = nil) async throws -> RunningChild {
        let child = try RunningChild(
            productURL("preferences-service-harness"), target.harness,
            environment: childEnvironment(), user: user)
        try await child.line(on: .output, "ready") { $0 == "ready" }
        return child
    }
}

/// The pids that `prefs replicas --json` lists for `target`.
func replicaPIDs(_ target: GracefulEndTests.Target) async throws -> [Int32] {
    try await replicaPIDs(options: target.options)
}

/// The pids that `prefs OPTIONS replicas --json` lists, run in `environment`
/// (by default this process's).
func replicaPIDs(options: [String], environment: [String: String]? = nil) async throws -> [Int32] {
    let listed = try await prefs(options + ["replicas", "--json"], environment: environment)
    let replicas = try JSONSerialization.jsonObject(with: Data(listed.output.utf8))
    guard let replicas = replicas as? [[String: Any]] else {
        Issue.record("not a JSON array of objects: \(listed.output)")
        return []
    }
    return replicas.compactMap { ($0["pid"] as? NSNumber)?.int32Value }.sorted()
}

/// This process's environment for a child, without what would move a
/// suite's store or an etcd cluster elsewhere.
func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for name in environment.keys
    where name.hasPrefix("PREFS_") && name != "PREFS_TEST_TIME_SCALE" {
        environment[name] = nil
    }
    environment.merge(extra) { $1 }
    return environment
}

/// The host name as a replica's registration gives it.
func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    gethostname(&buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
