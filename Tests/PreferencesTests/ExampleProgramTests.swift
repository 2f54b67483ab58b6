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
}
