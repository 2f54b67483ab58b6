import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `prefs watch [KEY ...] --since SEQ`: the history after SEQ, then live
/// changes, one entry a line; gaps said.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIWatchSinceTests {
    func watch(_ workspace: CLIWorkspace, _ arguments: String...) throws -> RunningProcess {
        try RunningProcess("prefs", ["--file", workspace.store.path, "watch"] + arguments)
    }

    @Test func watchSincePrintsTheChangesAfterItThenLiveOnes() async throws {
        let workspace = try CLIWorkspace()
        // a = 1 (#1), b = 2 (#2), a = 3 (#3).
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "2"], ["set", "a", "3"],
        ])
        let kept = try await workspace.libraryHistory().entries
        try #require(kept.count == 3)

        let watch = try watch(workspace, "--since", "1")
        defer { watch.kill(SIGKILL) }
        #expect(try await watch.nextLine() == kept[1].jsonText)
        #expect(try await watch.nextLine() == kept[2].jsonText)

        // Printed from the history: the feed is live now.
        try await workspace.prefsSucceeding([["set", "c", "4"]])
        let line = try #require(try await watch.nextLine())
        let entry = try #require(HistoryEntry(jsonValue: try TestJSON.parse(String(line))))
        #expect(entry.sequence == 4)
        #expect(entry.changes == ["c": .init(old: nil, new: 4)])
        #expect(entry.program == "prefs")
        #expect(entry.user == effectiveUserName())
        #expect(try await workspace.libraryHistory().entries.last?.jsonText == line)

        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
        #expect(try await watch.nextLine() == nil)
    }

    @Test func watchSinceWithKeysSkipsChangesThatTouchNoneOfThem() async throws {
        let workspace = try CLIWorkspace()
        // a = 1 (#1), b = 1 (#2), a = 2 (#3).
        try await workspace.prefsSucceeding([
            ["set", "a", "1"], ["set", "b", "1"], ["set", "a", "2"],
        ])
        let watch = try watch(workspace, "a", "--since", "0")
        defer { watch.kill(SIGKILL) }
        let first = try #require(try await watch.nextLine())
        #expect(first.hasPrefix(#"{"sequence":1,"#))
        let second = try #require(try await watch.nextLine())
        #expect(second.hasPrefix(#"{"sequence":3,"#))
        #expect(second.hasSuffix(#""changes":{"a":{"old":1,"new":2}}}"#))

        // b = 2 (#4) is skipped; a = 3 (#5) is the next line.
        try await workspace.prefsSucceeding([["set", "b", "2"], ["set", "a", "3"]])
        let live = try #require(try await watch.nextLine())
        #expect(live.hasPrefix(#"{"sequence":5,"#), "\(live)")
        watch.kill(SIGINT)
        #expect(try await watch.exit() == 0)
        #expect(try await watch.nextLine() == nil)
    }

    @Test func changesTheHistoryNoLongerKeepsAreAGapLine() async throws {
        let workspace = try CLIWorkspace()
        try workspace.writeTrimmedHistory()
        let kept = try await workspace.libraryHistory().entries
        try #require(kept.map(\.sequence) == [9, 10])
        let watch = try watch(workspace, "--since", "3")
        defer { watch.kill(SIGKILL) }
        #expect(try await watch.nextLine() == #"{"gap":{"after":3,"resumes_at":9}}"#)
        #expect(try await watch.nextLine() == kept[0].jsonText)
        #expect(try await watch.nextLine() == kept[1].jsonText)
        try await workspace.prefsSucceeding([["set", "a", "11"]])
        let live = try #require(try await watch.nextLine())
        #expect(live.hasPrefix(#"{"sequence":11,"#), "\(live)")
        #expect(live.hasSuffix(#""changes":{"a":{"old":10,"new":11}}}"#), "\(live)")
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test func aGapIsShownEvenWhenKeysAreGiven() async throws {
        let workspace = try CLIWorkspace()
        try workspace.writeTrimmedHistory()
        let watch = try watch(workspace, "other", "--since", "3")
        defer { watch.kill(SIGKILL) }
        #expect(try await watch.nextLine() == #"{"gap":{"after":3,"resumes_at":9}}"#)
        try await workspace.prefsSucceeding([["set", "a", "11"], ["set", "other", "1"]])
        let live = try #require(try await watch.nextLine())
        #expect(live.hasPrefix(#"{"sequence":12,"#), "\(live)")
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test(arguments: [["--since", "x"], ["--since", "2026-12-01T10:00:00Z"], ["--since"]])
    func aSinceThatIsNotASequenceNumberIsAUsageError(arguments: [String]) async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs(["watch"] + arguments)
        output.expectUsageError("prefs watch [KEY ...] [--since SEQ] (see 'prefs watch --help')")
    }
}
