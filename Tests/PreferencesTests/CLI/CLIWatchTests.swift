import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `prefs watch`: JSON lines for changes made by other processes, ended by a signal.
@Suite struct CLIWatchTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func watchPrintsChangesFromAnotherPrefsAndExitsZeroOnSignal(signal: Int32) async throws {
        let workspace = try CLIWorkspace()
        try workspace.prefs("set", "a", "1")
        let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
        // The current state comes first; once it is printed the watch is live.
        #expect(try await watch.nextLine() == #"{"key":"a","value":1}"#)

        try workspace.prefs("set", "a", "2")
        #expect(try await watch.nextLine() == #"{"key":"a","value":2}"#)
        try workspace.prefs("set", "b", "hello world")
        #expect(try await watch.nextLine() == #"{"key":"b","value":"hello world"}"#)
        try workspace.prefs("delete", "a")
        #expect(try await watch.nextLine() == #"{"key":"a","removed":true}"#)

        watch.kill(signal)
        #expect(try await watch.exit() == 0)
        #expect(try await watch.nextLine() == nil)
    }

    @Test func watchWithKeysPrintsOnlyThoseKeys() async throws {
        let workspace = try CLIWorkspace()
        try workspace.prefs("set", "wanted", "1")
        try workspace.prefs("set", "other", "1")
        let watch = try RunningProcess(
            "prefs", ["--file", workspace.store.path, "watch", "wanted"])
        #expect(try await watch.nextLine() == #"{"key":"wanted","value":1}"#)
        try workspace.prefs("set", "other", "2")
        try workspace.prefs("set", "wanted", "2")
        #expect(try await watch.nextLine() == #"{"key":"wanted","value":2}"#)
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test func watchSeesEditsMadeThroughTheLibraryInAnotherProcess() async throws {
        let workspace = try CLIWorkspace()
        try workspace.prefs("set", "counter", "0")
        let watch = try RunningProcess("prefs", ["--file", workspace.store.path, "watch"])
        #expect(try await watch.nextLine() == #"{"key":"counter","value":0}"#)
        let harness = try run("prefs-harness", ["increment", workspace.store.path, "counter", "1"])
        #expect(harness.status == 0)
        #expect(try await watch.nextLine() == #"{"key":"counter","value":1}"#)
        watch.kill(SIGTERM)
        #expect(try await watch.exit() == 0)
    }
}
