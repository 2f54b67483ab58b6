import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `prefs set KEY VALUE --for DURATION` (A4 in
/// Sources/Preferences/Preferences.docc/ChangingSettingsSafely.md): the
/// value holds until then, and afterwards the key reads as before, with no
/// process running.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLITemporaryTests {
    let workspace: CLIWorkspace

    init() throws {
        workspace = try CLIWorkspace()
    }

    @Test(arguments: [
        "0s", "0h0m0s", "-5m", "abc", "10", "5d", "1.5h", "h", "1m1h", "1h1h", "30 s", "",
        "99999999999999999999h", "9000h", "527041m", "1h-5m",
    ])
    func aDurationItDoesNotTakeIsAUsageErrorAndWritesNothing(duration: String) async throws {
        try await workspace.prefs("set", "log_level", "info")
        let before = try Data(contentsOf: workspace.store)
        let output = try await workspace.prefs("set", "log_level", "debug", "--for=\(duration)")
        #expect(output.status == 2, "\(output.standardError)")
        #expect(output.standardOutput.isEmpty)
        let lines = output.standardError.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(output.standardError)")
        #expect(
            output.standardError.hasPrefix("prefs: error: invalid --for '\(duration)' ("),
            "\(output.standardError)")
        #expect(try Data(contentsOf: workspace.store) == before)
    }

    @Test func aMissingDurationIsAUsageErrorAndCreatesNoStore() async throws {
        let output = try await workspace.prefs("set", "log_level", "debug", "--for", "5d")
        #expect(output.status == 2)
        #expect(!FileManager.default.fileExists(atPath: workspace.store.path))
    }

    @Test func getAndListLongShowTheEndAndWhatTheKeyReturnsTo() async throws {
        try await workspace.prefs("set", "log_level", "info")
        let before = Date()
        let set = try await workspace.prefs("set", "log_level", "debug", "--for", "1h30m")
        let after = Date()
        #expect(set.status == 0, "\(set.standardError)")
        #expect(try await workspace.prefs("get", "log_level").line == "debug")

        let long = try await workspace.prefs("get", "log_level", "--long").line
        let pattern = /debug  # \S+ by .+ using prefs; temporary until (\S+Z), then "info"/
        let match = try #require(try pattern.wholeMatch(in: long), "\(long)")
        let end = try #require(ISO8601.parse(String(match.1)))
        // 90 minutes from the moment prefs ran, to the millisecond it writes.
        #expect(end.timeIntervalSince(before) >= 5400 - 0.001, "\(long)")
        #expect(end.timeIntervalSince(after) <= 5400 + 0.001, "\(long)")
        let listed = try await workspace.prefs("list", "--long").line
        #expect(listed.hasPrefix("log_level = \"debug\"  # "), "\(listed)")
        #expect(listed.hasSuffix("; temporary until \(match.1), then \"info\""), "\(listed)")
        let json = try await workspace.prefs("get", "log_level", "--long", "--json").line
        #expect(json.contains(#""temporary":{"then":"info","until":"\#(match.1)"}"#), "\(json)")
        #expect(json.contains(#""value":"debug""#))
        let listJSON = try await workspace.prefs("list", "--long", "--json").line
        #expect(listJSON.contains(#""temporary":{"then":"info","until":"\#(match.1)"}"#))

        // A key that was not set returns to unset: "then" is absent.
        try await workspace.prefs("set", "trace", "on", "--for", "2h")
        #expect(
            try await workspace.prefs("get", "trace", "--long").line.hasSuffix(", then (unset)"))
        let traceJSON = try await workspace.prefs("get", "trace", "--long", "--json").line
        #expect(traceJSON.contains(#""temporary":{"until":""#), "\(traceJSON)")
        #expect(!traceJSON.contains("then"))

        // An ordinary set ends the temporary value early.
        try await workspace.prefs("set", "log_level", "warn")
        let ended = try await workspace.prefs("get", "log_level", "--long").line
        #expect(ended.hasPrefix("warn  # ") && !ended.contains("temporary"), "\(ended)")
        // The listing says so too: log_level's line ends with who changed
        // it, while trace stays temporary.
        let lines = try await workspace.prefs("list", "--long").standardOutput
            .split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(lines)")
        #expect(
            try /log_level = "warn"  # \S+Z by [^;]+ using prefs/.wholeMatch(in: lines[0]) != nil,
            "\(lines[0])")
        #expect(lines[1].hasPrefix("trace = \"on\"  # "), "\(lines[1])")
        #expect(lines[1].hasSuffix(", then (unset)"), "\(lines[1])")
    }

    @Test func afterTheEndAFreshGetReadsTheEarlierValueWithNothingRunning() async throws {
        // Set first, so it ends first.
        try await workspace.prefs("set", "fresh", "yes", "--for", "1s")
        try await workspace.prefs("set", "log_level", "info")
        try await workspace.prefs("set", "log_level", "debug", "--for", "1s")
        // The end, from the history: a get --long may come after it on a busy machine.
        let end = try Self.end(of: try await workspace.prefs("log", "-n", "1").line)
        var values: [String] = []
        let reads = try await pollUntil(deadline: .seconds(30)) {
            values.append(try await workspace.prefs("get", "log_level").line)
            return values.last == "info"
        }
        // Each read that saw "debug" began before the end, and the one that
        // saw "info" ended after it; nothing else was read.
        for (read, value) in zip(reads, values).dropLast() {
            #expect(value == "debug")
            #expect(read.started <= end)
        }
        #expect(try #require(reads.last).finished >= end)
        // A key without an earlier value is unset again.
        let unset = try await workspace.prefs("get", "fresh")
        #expect(unset.status == 1, "\(unset.standardOutput)")
        #expect(try await workspace.prefs("list").standardOutput == "log_level = \"info\"\n")
    }

    @Test func watchDeliversTheEndWhenItComes() async throws {
        try await workspace.prefs("set", "log_level", "info")
        let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
        // Killed only while it may run: once reaped, its pid may be another's.
        var exited = false
        defer { if !exited { watch.kill(SIGKILL) } }
        #expect(
            try await watch.nextLine()?.hasPrefix(#"{"key":"log_level","value":"info""#) == true)
        try await workspace.prefs("set", "log_level", "debug", "--for", "10s")
        let started = try #require(try await watch.nextLine())
        #expect(started.hasPrefix(#"{"key":"log_level","value":"debug","modified":"#), "\(started)")
        let until = try #require(try /"until":"([^"]+)"/.firstMatch(in: started), "\(started)")
        let end = try #require(ISO8601.parse(String(until.1)))
        let ended = try #require(try await watch.nextLine(timeout: .seconds(60)))
        let arrived = Date()
        #expect(ended.hasPrefix(#"{"key":"log_level","value":"info""#), "\(ended)")
        #expect(!ended.contains("until"))
        let latency = arrived.timeIntervalSince(end)
        print(
            "prefs watch: the end of a temporary value arrived \(Int(latency * 1000)) ms after it")
        // Never before the end. How late is printed, not asserted: alone a
        // few milliseconds, but this process itself can wait seconds to run
        // with the whole suite on two cores.
        #expect(latency >= 0, "delivered \(-latency) s before the end")
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
        exited = true
    }

    /// The end a `get --long` or `log` line names.
    static func end(of line: String) throws -> Date {
        let match = try #require(try /temporary until ([^\s,)]+Z)/.firstMatch(in: line), "\(line)")
        return try #require(ISO8601.parse(String(match.1)))
    }
}

/// One read made while polling: when it began and ended.
struct TimedRead {
    let started: Date
    let finished: Date
}

/// Runs `read` until it returns true, waiting a little longer each time (2
/// ms doubling to 100 ms) between reads, and fails when `deadline` passes
/// first. Returns when each read began and ended, the last one the read that
/// returned true.
func pollUntil(
    deadline: Duration, _ read: () async throws -> Bool
) async throws -> [TimedRead] {
    let limit = TestTime.deadline(in: deadline)
    var pause = Duration.milliseconds(2)
    var reads: [TimedRead] = []
    while true {
        let started = Date()
        let done = try await read()
        reads.append(TimedRead(started: started, finished: Date()))
        if done { return reads }
        guard ContinuousClock.now < limit else {
            throw DeadlineExceeded(
                description: "the condition did not hold within \(deadline) (\(reads.count) reads)")
        }
        try await Task.sleep(for: pause)
        pause = min(pause * 2, .milliseconds(100))
    }
}
