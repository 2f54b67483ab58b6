import Foundation
import PreferencesTestSupport
import Testing

/// `prefs-example`, the package's small service, as a service's operator
/// meets it when its store is corrupt: one line naming the file and a
/// status, never a crash with a backtrace.
@Suite struct ExampleProgramTests {
    @Test func onACorruptStoreItPrintsOneLineNamingTheFileAndExitsWithStatusOne() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("example.json")
        try Data("{ not json".utf8).write(to: store)
        var environment = cleanEnvironment()
        environment["PREFS_HOME"] = directory.path
        let result = try await runChild(
            "prefs-example", ["--seconds", "0"], environment: environment)
        #expect(result.status == 1, "\(result.standardError)")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(result.standardError)")
        #expect(
            lines.first?.hasPrefix("prefs-example: \(store.path) is not a valid preferences file")
                == true, "\(result.standardError)")
        #expect(!result.standardError.contains("Fatal error"), "\(result.standardError)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        // Nothing was written: the corrupt file is left for the operator.
        #expect(try Data(contentsOf: store) == Data("{ not json".utf8))
    }

    /// SIGTERM, as a service manager stops it: it says so, closes its
    /// store (which takes it off `prefs replicas`) and exits with status 0.
    @Test func sigtermStopsItGracefullyAndItLeavesNoReplicaBehind() async throws {
        let directory = try TemporaryDirectory()
        var environment = cleanEnvironment()
        environment["PREFS_HOME"] = directory.path
        let child = try ChildCommand(
            "prefs-example", ["--seconds", "600"], environment: environment
        ).start()
        defer { child.kill() }
        while let line = try await child.nextLine(), !line.contains("[1]") {}
        let replicas = directory.file("example.replicas.d")
        let registered = try FileManager.default.contentsOfDirectory(atPath: replicas.path)
        #expect(registered.count == 1, "registered: \(registered)")

        child.kill(SIGTERM)
        let result = try await child.result(timeout: .seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasSuffix("stopping\n"), "\(result.standardOutput)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: replicas.path)) ?? []
        #expect(left.isEmpty, "left registered: \(left)")
    }
}
