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
@Suite(.enabled(if: etcdAvailable, etcdUnavailableReason), .timeLimit(.minutes(3)))
struct EtcdCLIHistoryTests {
    func prefs(_ arguments: [String]) async throws -> ProcessOutput {
        var environment = cleanEnvironment()
        environment["PREFS_ETCD_ENDPOINTS"] = nil
        let final = environment
        return try await offPool { try run("prefs", arguments, environment: final) }
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

        let log = try await prefs(etcd + ["log"])
        #expect(log.status == 0, "\(log.standardError)")
        #expect(log.lines == kept.reversed().map(\.description))
        #expect(try await prefs(etcd + ["log", "--json", "-n", "1"]).lines == [kept[2].jsonText])
        #expect(
            try await prefs(etcd + ["log", "a", "--since", "1"]).lines == [kept[1].description])

        #expect(try await prefs(etcd + ["revert", "2"]).line == "reverted #2 as #4")
        // #2 set a to 2, and #4 changed it since.
        let conflict = try await prefs(etcd + ["revert", "2"])
        #expect(conflict.status == 3)
        #expect(conflict.standardError.hasSuffix("these keys changed since: 'a'\n"))

        let dryRun = try await prefs(etcd + ["restore", "--to", "0", "--dry-run"])
        #expect(dryRun.standardOutput == "a: 1 → (unset)\nb: \"x\" → (unset)\n")
        #expect(try await prefs(etcd + ["restore", "--to", "2"]).line == "restored to #2 as #5")
        #expect(try await prefs(etcd + ["list"]).standardOutput == "a = 2\n")

        let watch = try RunningProcess("prefs", etcd + ["watch", "--since", "3"])
        defer { watch.kill(SIGKILL) }
        let replayed = try await store.history(after: 3).entries
        #expect(try await watch.nextLine() == replayed[0].jsonText)
        #expect(try await watch.nextLine() == replayed[1].jsonText)
        try await store.set(PreferenceKey<Int>("c", default: 0), 7)
        let live = try #require(try await watch.nextLine())
        #expect(live.hasPrefix(#"{"sequence":6,"#), "\(live)")
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }
}
