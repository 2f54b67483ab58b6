import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `prefs watch`: JSON lines for changes made by other processes, ended by a signal.
@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 10)) struct CLIWatchTests {
    /// A watch line without its `modified` member (checked on its own in
    /// `eachLineSaysWhoMadeTheChange`).
    static func withoutModification(_ line: String?) -> String? {
        guard let line, let range = line.range(of: #","modified":{"#) else { return line }
        return String(line[..<range.lowerBound]) + "}"
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func watchPrintsChangesFromAnotherPrefsAndExitsZeroOnSignal(signal: Int32) async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
        // The current state comes first; once it is printed the watch is live.
        #expect(Self.withoutModification(try await watch.nextLine()) == #"{"key":"a","value":1}"#)

        try await workspace.prefs("set", "a", "2")
        #expect(Self.withoutModification(try await watch.nextLine()) == #"{"key":"a","value":2}"#)
        try await workspace.prefs("set", "b", "hello world")
        #expect(
            Self.withoutModification(try await watch.nextLine())
                == #"{"key":"b","value":"hello world"}"#)
        try await workspace.prefs("delete", "a")
        #expect(try await watch.nextLine() == #"{"key":"a","removed":true}"#)

        watch.kill(signal)
        #expect(try await watch.exit() == 0)
        #expect(try await watch.nextLine() == nil)
    }

    /// The signals are caught from before the store opens: one sent the
    /// moment the first line appears ends the watch with status 0, every
    /// time (the feed's first line and the signal handling used to race).
    @Test func aSignalAsSoonAsTheFirstLineAppearsStillExitsZero() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        for round in 0..<10 {
            let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
            _ = try await watch.nextLine()
            watch.kill(round.isMultiple(of: 2) ? SIGTERM : SIGINT)
            #expect(try await watch.exit() == 0, "round \(round)")
        }
    }

    @Test func watchWithKeysPrintsOnlyThoseKeys() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "wanted", "1")
        try await workspace.prefs("set", "other", "1")
        let watch = try RunningProcess(
            "prefs", ["--file", workspace.store.path, "watch", "wanted"])
        #expect(
            Self.withoutModification(try await watch.nextLine()) == #"{"key":"wanted","value":1}"#)
        try await workspace.prefs("set", "other", "2")
        try await workspace.prefs("set", "wanted", "2")
        #expect(
            Self.withoutModification(try await watch.nextLine()) == #"{"key":"wanted","value":2}"#)
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test func watchSeesEditsMadeThroughTheLibraryInAnotherProcess() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "counter", "0")
        let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
        #expect(
            Self.withoutModification(try await watch.nextLine()) == #"{"key":"counter","value":0}"#)
        let harness = try await runChild(
            "prefs-harness", ["increment", workspace.store.path, "counter", "1"])
        #expect(harness.status == 0)
        #expect(
            Self.withoutModification(try await watch.nextLine()) == #"{"key":"counter","value":1}"#)
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test func eachLineSaysWhoMadeTheChange() async throws {
        let workspace = try CLIWorkspace()
        let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
        defer { watch.kill(SIGKILL) }
        try await workspace.prefs("set", "ready", "1")
        // An empty store prints nothing first; wait for the first change.
        let first = try #require(try await watch.nextLine())
        let harness = try await runChild(
            "prefs-harness", ["increment", workspace.store.path, "ready", "1"])
        #expect(harness.status == 0)
        let second = try #require(try await watch.nextLine())
        for (line, program) in [(first, "prefs"), (second, "prefs-harness")] {
            let object = try TestJSON.parse(String(line))
            guard case .object(let fields) = object,
                case .object(let modified)? = fields["modified"]
            else {
                Issue.record("no modified member in \(line)")
                continue
            }
            #expect(modified["by"] == .string(effectiveUserName()), "\(line)")
            #expect(modified["program"] == .string(program), "\(line)")
            guard case .string(let at)? = modified["at"] else {
                Issue.record("no time in \(line)")
                continue
            }
            #expect(at.hasSuffix("Z") && ISO8601.parse(at) != nil, "\(line)")
        }
    }
}
