import Foundation
import PreferencesEtcd
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `log`, `revert`, `restore` and `watch --since` on a store in etcd: the
/// same output as on a file.
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .scaledTimeLimit(minutes: 3))
struct EtcdCLIHistoryTests {
    /// Runs `prefs` with the clean environment (no PREFS_ETCD_*).
    func prefs(_ arguments: [String]) async throws -> ProcessOutput {
        try await runChild("prefs", arguments)
    }

    /// The times (`at`) of the history entries the document at `key`
    /// carries, by sequence, read from its JSON with `etcdctl`.
    func recordedTimes(_ cluster: EtcdCluster, _ key: String) async throws -> [Int: String] {
        let document = try await cluster.document(key)
        let root = try #require(
            try JSONSerialization.jsonObject(with: document.value) as? [String: Any])
        let entries = try #require(root["history"] as? [[String: Any]], "\(document.text)")
        var times: [Int: String] = [:]
        for entry in entries {
            let sequence = try #require(entry["sequence"] as? Int, "\(entry)")
            times[sequence] = try #require(entry["at"] as? String, "\(entry)")
        }
        return times
    }

    @Test func historyCommandsWorkOnAStoreInEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("cli-history")
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        // a = 1 (#1), a = 2 (#2), b = "x" (#3).
        for arguments in [["set", "a", "1"], ["set", "a", "2"], ["set", "b", "x"]] {
            let output = try await prefs(etcd + arguments)
            try #require(output.status == 0, "\(output.standardError)")
        }
        let store = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false))
        let kept = try await store.history().entries
        try #require(kept.map(\.sequence) == [1, 2, 3])

        // Written out, with the times the document in etcd records.
        let user = effectiveUserName()
        var at = try await recordedTimes(cluster, key)
        try #require(at.count == 3, "\(at)")
        let log = try await prefs(etcd + ["log"])
        #expect(log.status == 0, "\(log.standardError)")
        #expect(
            log.lines == [
                #"#3 \#(at[3]!) \#(user) via prefs: b (unset) → "x""#,
                "#2 \(at[2]!) \(user) via prefs: a 1 → 2",
                "#1 \(at[1]!) \(user) via prefs: a (unset) → 1",
            ])
        let who = #""by":"\#(user)","program":"prefs","host":"\#(Platform.hostName)""#
        #expect(
            try await prefs(etcd + ["log", "--json", "-n", "1"]).lines == [
                #"{"sequence":3,"at":"\#(at[3]!)",\#(who),"changes":{"b":{"new":"x"}}}"#
            ])
        #expect(
            try await prefs(etcd + ["log", "a", "--since", "1"]).lines == [
                "#2 \(at[2]!) \(user) via prefs: a 1 → 2"
            ])

        #expect(try await prefs(etcd + ["revert", "2"]).line == "reverted #2 as #4")
        // #2 set a to 2, and #4 changed it since.
        let conflict = try await prefs(etcd + ["revert", "2"])
        #expect(conflict.status == 3)
        #expect(conflict.standardError.hasSuffix("these keys changed since: 'a'\n"))

        let dryRun = try await prefs(etcd + ["restore", "--to", "0", "--dry-run"])
        #expect(dryRun.standardOutput == "a: 1 → (unset)\nb: \"x\" → (unset)\n")
        #expect(try await prefs(etcd + ["restore", "--to", "2"]).line == "restored to #2 as #5")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 2\n")

        at = try await recordedTimes(cluster, key)
        try #require(at.count == 5, "\(at)")
        let watch = try RunningProcess("prefs", etcd + ["watch", "--since", "3"])
        defer { watch.kill(SIGKILL) }
        #expect(
            try await watch.nextLine()
                == #"{"sequence":4,"at":"\#(at[4]!)",\#(who),"cause":"revert #2","changes":{"a":{"old":2,"new":1}}}"#
        )
        #expect(
            try await watch.nextLine()
                == #"{"sequence":5,"at":"\#(at[5]!)",\#(who),"cause":"restore to #2","changes":{"a":{"old":1,"new":2},"b":{"old":"x"}}}"#
        )
        try await store.set(PreferenceKey<Int>("c", default: 0), 7)
        let live = try #require(try await watch.nextLine())
        #expect(live.hasPrefix(#"{"sequence":6,"#), "\(live)")
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test func aRevertOverAKeyChangedSinceIsRefusedUnlessForcedOnEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("cli-revert")
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        // a = 1 (#1), a = 2 (#2), b = 1 (#3), a = 3 (#4).
        for arguments in [
            ["set", "a", "1"], ["set", "a", "2"], ["set", "b", "1"], ["set", "a", "3"],
        ] {
            let output = try await prefs(etcd + arguments)
            try #require(output.status == 0, "\(output.standardError)")
        }
        let before = try await modRevision(cluster, key)
        let refused = try await prefs(etcd + ["revert", "2"])
        #expect(refused.status == 3)
        #expect(refused.standardOutput == "")
        #expect(
            refused.standardError
                == "prefs: error: change #2 cannot be reverted: these keys changed since: 'a'\n")
        #expect(try await modRevision(cluster, key) == before, "a refused revert wrote")

        let forced = try await prefs(etcd + ["revert", "2", "--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(forced.standardOutput == "reverted #2 as #5\n")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 1\nb = 1\n")
        let logged = try await prefs(etcd + ["log", "-n", "1"])
        #expect(logged.line.hasPrefix("#5 "), "\(logged.line)")
        #expect(logged.line.hasSuffix(" via prefs (revert #2): a 3 → 1"), "\(logged.line)")
    }

    @Test func restoreGoesBackAndForwardAgainOnEtcd() async throws {
        let cluster = try await SharedEtcd.cluster()
        let key = uniqueKey("cli-restore")
        let etcd = ["--etcd", cluster.endpointList, "--key", key]
        // a = 1 (#1), b = "x" (#2), a = 2 (#3), b removed (#4), c = true (#5).
        for arguments in [
            ["set", "a", "1"], ["set", "b", "x"], ["set", "a", "2"], ["delete", "b"],
            ["set", "c", "true"],
        ] {
            let output = try await prefs(etcd + arguments)
            try #require(output.status == 0, "\(output.standardError)")
        }
        let back = try await prefs(etcd + ["restore", "--to", "2"])
        #expect(back.status == 0, "\(back.standardError)")
        #expect(back.standardOutput == "restored to #2 as #6\n")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 1\nb = \"x\"\n")
        let logged = try await prefs(etcd + ["log", "-n", "1"])
        #expect(
            logged.line.hasSuffix(
                #" via prefs (restore to #2): a 2 → 1, b (unset) → "x", c true → (unset)"#),
            "\(logged.line)")

        let forward = try await prefs(etcd + ["restore", "--to", "5"])
        #expect(forward.status == 0, "\(forward.standardError)")
        #expect(forward.standardOutput == "restored to #5 as #7\n")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 2\nc = true\n")

        let before = try await modRevision(cluster, key)
        let again = try await prefs(etcd + ["restore", "--to", "7"])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput == "nothing to restore: the store holds that state\n")
        #expect(try await modRevision(cluster, key) == before, "restoring the state held wrote")

        // 0: before any change.
        #expect(try await prefs(etcd + ["restore", "--to=0"]).line == "restored to #0 as #8")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "")
        let history = try await PreferencesStore(
            storage: cluster.storage(key, sharesState: false), liveReads: false
        ).history()
        #expect(history.entries.map(\.sequence) == Array(1...8))
    }

    /// The key's `mod_revision`, as `etcdctl get` shows it: it moves with
    /// every write.
    func modRevision(_ cluster: EtcdCluster, _ key: String) async throws -> Int {
        let output = try await offPool { try cluster.etcdctlChecked(["get", key, "-w", "json"]) }
        let reply = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
        let pair = try #require(
            ((reply as? [String: Any])?["kvs"] as? [[String: Any]])?.first,
            "no key \(key): \(output.standardOutput)")
        return try #require(pair["mod_revision"] as? Int, "\(pair)")
    }
}
