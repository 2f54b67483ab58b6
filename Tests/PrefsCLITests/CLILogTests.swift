import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences
@testable import PrefsCLI

/// `prefs log`: the history's changes, newest first, as lines or JSON.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLILogTests {
    /// a = 1 (#1), b = "hello world" (#2), a = 2 (#3), b removed (#4).
    static let changes = [
        ["set", "a", "1"], ["set", "b", "hello world"], ["set", "a", "2"], ["delete", "b"],
    ]

    func workspaceWithChanges() async throws -> CLIWorkspace {
        let workspace = try CLIWorkspace()
        try await workspace.prefsSucceeding(Self.changes)
        return workspace
    }

    @Test func logPrintsOneLinePerChangeNewestFirst() async throws {
        let workspace = try await workspaceWithChanges()
        let output = try await workspace.prefs("log")
        #expect(output.status == 0)
        #expect(output.standardError == "")
        let user = effectiveUserName()
        let expected = [
            (4, #"b "hello world" → (unset)"#),
            (3, "a 1 → 2"),
            (2, #"b (unset) → "hello world""#),
            (1, "a (unset) → 1"),
        ]
        try #require(output.lines.count == expected.count, "\(output.standardOutput)")
        for (line, (sequence, change)) in zip(output.lines, expected) {
            let words = line.split(separator: " ", maxSplits: 2).map(String.init)
            try #require(words.count == 3, "\(line)")
            #expect(words[0] == "#\(sequence)", "\(line)")
            // UTC, to the millisecond: 2026-12-02T03:12:09.120Z.
            #expect(words[1].count == 24 && words[1].hasSuffix("Z"), "\(line)")
            #expect(ISO8601.parse(words[1]) != nil, "\(line)")
            #expect(words[2] == "\(user) via prefs: \(change)", "\(line)")
        }
        // Each line's time is the one the file records for its change.
        let times = output.lines.map { String($0.split(separator: " ")[1]) }
        #expect(times == Array(try workspace.recordedTimes().reversed()))
    }

    @Test func aLineNamesTheSudoUserAndTheCause() async throws {
        let workspace = try CLIWorkspace()
        try workspace.writeTrimmedHistory()
        try await workspace.prefsSucceeding([["revert", "10"]])
        let output = try await workspace.prefs("log")
        #expect(output.status == 0)
        let user = effectiveUserName()
        try #require(output.lines.count == 3, "\(output.standardOutput)")
        #expect(output.lines[0].hasPrefix("#11 "))
        #expect(output.lines[0].hasSuffix(" \(user) via prefs (revert #10): a 10 → 9"))
        #expect(
            output.lines[1...] == [
                "#10 2026-12-01T10:00:10.000Z alice (sudo from bob) via prefs: a 9 → 10",
                "#9 2026-12-01T10:00:09.000Z alice via prefs: a 8 → 9",
            ])
    }

    @Test(arguments: [["-n", "2"], ["-n2"], ["--max-count", "2"], ["--max-count=2"]])
    func dashNShowsTheNNewest(option: [String]) async throws {
        let workspace = try await workspaceWithChanges()
        let all = try await workspace.prefs("log")
        let output = try await workspace.prefs(["log"] + option)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.lines == Array(all.lines.prefix(2)))
        #expect(output.lines.map { $0.prefix(3) } == ["#4 ", "#3 "])
    }

    @Test func dashNBeyondTheHistoryShowsEverythingAndZeroShowsNothing() async throws {
        let workspace = try await workspaceWithChanges()
        let all = try await workspace.prefs("log")
        #expect(try await workspace.prefs("log", "-n", "10").lines == all.lines)
        let none = try await workspace.prefs("log", "-n", "0")
        #expect(none.status == 0)
        #expect(none.standardOutput == "")
    }

    @Test func keysFilterToTheChangesThatTouchedThem() async throws {
        let workspace = try await workspaceWithChanges()
        let onlyA = try await workspace.prefs("log", "a")
        #expect(onlyA.lines.map { $0.prefix(3) } == ["#3 ", "#1 "])
        #expect(onlyA.lines.allSatisfy { $0.contains(": a ") })
        let both = try await workspace.prefs("log", "b", "a")
        #expect(both.lines.map { $0.prefix(3) } == ["#4 ", "#3 ", "#2 ", "#1 "])
        let neither = try await workspace.prefs("log", "c")
        #expect(neither.status == 0)
        #expect(neither.standardOutput == "")
        // With -n, the newest of those.
        #expect(try await workspace.prefs("log", "b", "-n", "1").lines == [both.lines[0]])
    }

    @Test func sinceASequenceShowsTheChangesAfterIt() async throws {
        let workspace = try await workspaceWithChanges()
        let all = try await workspace.prefs("log")
        #expect(try await workspace.prefs("log", "--since", "2").lines == Array(all.lines[..<2]))
        #expect(try await workspace.prefs("log", "--since", "0").lines == all.lines)
        let none = try await workspace.prefs("log", "--since", "4")
        #expect(none.status == 0)
        #expect(none.standardOutput == "")
        #expect(
            try await workspace.prefs("log", "a", "--since=1").lines.map { $0.prefix(3) } == [
                "#3 "
            ])
    }

    @Test func sinceATimeShowsTheChangesMadeAtOrAfterIt() async throws {
        let workspace = try await workspaceWithChanges()
        let all = try await workspace.prefs("log")
        let entries = try await workspace.libraryHistory().entries
        try #require(entries.count == 4)
        // Children run one after another: their times differ.
        try #require(entries[1].date < entries[2].date && entries[2].date < entries[3].date)

        // With milliseconds: at #3's time, so #3 and #4.
        let third = entries[2].timestamp
        #expect(try await workspace.prefs("log", "--since", third).lines == Array(all.lines[..<2]))

        // Whole seconds, in UTC or at an offset: the lines of the changes
        // made at or after that second. The times are read here with
        // Foundation's formatters, not the library's reader.
        let second = String(third.prefix(19))
        let start = try #require(ISO8601DateFormatter().date(from: second + "Z"))
        let withMilliseconds = ISO8601DateFormatter()
        withMilliseconds.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let expected = try all.lines.filter { line in
            let time = String(line.split(separator: " ")[1])
            return try #require(withMilliseconds.date(from: time), "\(line)") >= start
        }
        try #require(expected.count >= 2, "\(all.lines)")
        /// `start` as local time at `offset` seconds east of UTC, then `suffix`.
        func local(_ offset: Int, _ suffix: String) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: offset)
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
            return formatter.string(from: start) + suffix
        }
        for text in [
            second + "Z", second + "+00:00", local(5 * 3600 + 30 * 60, "+05:30"),
            local(-3 * 3600, "-03:00"),
        ] {
            let output = try await workspace.prefs("log", "--since", text)
            #expect(output.status == 0, "\(output.standardError)")
            #expect(output.lines == expected, "\(text)")
        }
    }

    @Test func jsonPrintsTheEntriesTheLibraryReads() async throws {
        let workspace = try await workspaceWithChanges()
        let output = try await workspace.prefs("log", "--json")
        #expect(output.status == 0)
        #expect(output.standardError == "")
        // Written out, with the times the file records and this host.
        let at = Array(try workspace.recordedTimes().reversed())
        try #require(at.count == 4)
        let who =
            #""by":"\#(effectiveUserName())","program":"prefs","host":"\#(Platform.hostName)""#
        #expect(
            output.lines == [
                #"{"sequence":4,"at":"\#(at[0])",\#(who),"changes":{"b":{"old":"hello world"}}}"#,
                #"{"sequence":3,"at":"\#(at[1])",\#(who),"changes":{"a":{"old":1,"new":2}}}"#,
                #"{"sequence":2,"at":"\#(at[2])",\#(who),"changes":{"b":{"new":"hello world"}}}"#,
                #"{"sequence":1,"at":"\#(at[3])",\#(who),"changes":{"a":{"new":1}}}"#,
            ])
        let parsed = try output.lines.map { line in
            try #require(HistoryEntry(jsonValue: try TestJSON.parse(String(line))), "\(line)")
        }
        #expect(parsed.map(\.sequence) == [4, 3, 2, 1])
        // "old" absent: not set before; "new" absent: removed.
        #expect(output.lines[3].hasPrefix(#"{"sequence":1,"at":""#))
        #expect(output.lines[3].hasSuffix(#""changes":{"a":{"new":1}}}"#))
        #expect(output.lines[0].hasSuffix(#""changes":{"b":{"old":"hello world"}}}"#))
        #expect(output.lines[1].hasSuffix(#""changes":{"a":{"old":1,"new":2}}}"#))
        #expect(
            output.lines[3].contains(
                #""by":"\#(effectiveUserName())","program":"prefs","host":""#))
        // Filters and -n apply as to lines.
        #expect(
            try await workspace.prefs("log", "a", "--json", "-n", "1").lines == [output.lines[1]])
    }

    @Test func aStoreWithoutHistoryLogsNothing() async throws {
        let workspace = try CLIWorkspace()
        let output = try await workspace.prefs("log")
        #expect(output.status == 0)
        #expect(output.standardOutput == "")
        #expect(output.standardError == "")
    }

    @Test(arguments: [
        (
            ["--since", "yesterday"],
            "invalid --since 'yesterday' (use a sequence number or an ISO 8601 time"
        ),
        (["--since", "2026-13-01T00:00:00Z"], "invalid --since '2026-13-01T00:00:00Z'"),
        (["--since", "-1"], "invalid --since '-1'"),
        (["-n", "x"], "invalid -n 'x' (use a whole number of changes)"),
        (["-n", "-1"], "invalid -n '-1'"),
        (["-nx"], "invalid -n 'x'"),
        (["-n"], "option '-n' needs a value (N)"),
        (["--max-count"], "option '--max-count' needs a value (N)"),
        (["-m"], "unknown option '-m'"),
    ])
    func badOptionsAreUsageErrors(arguments: [String], message: String) async throws {
        let workspace = try await workspaceWithChanges()
        let output = try await workspace.prefs(["log"] + arguments)
        output.expectUsageError(
            "prefs log [KEY ...] [-n N] [--since SEQ|TIME] [--json] (see 'prefs log --help')",
            message: message)
    }

    @Test func aShortNameIsTheLongOptionOnlyAfterItsCommand() throws {
        let parser = CommandLineParser()
        for words in [
            ["log", "-n", "3"], ["log", "-n3"], ["log", "--max-count", "3"],
            ["log", "--max-count=3"],
        ] {
            let invocation = try parser.parse(words)
            #expect(invocation.options(for: LogCommand.self)[LogCommand.count] == "3", "\(words)")
        }
        // Before the command it names no option; -h stays help.
        #expect(throws: CommandFailure.self) { try parser.parse(["-n", "3", "log"]) }
        #expect(try parser.parse(["log", "-h"]).wantsHelp)
        // A value that looks like an option is still the value.
        #expect(
            try parser.parse(["log", "-n", "-5"]).options(for: LogCommand.self)[LogCommand.count]
                == "-5")
        // After --, an argument.
        #expect(try parser.parse(["log", "--", "-n"]).arguments == ["-n"])
    }
}
