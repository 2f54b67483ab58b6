import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs` takes the store's lock (7.4 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md): nothing is lost
/// when it runs beside other `prefs` processes and a service editing through
/// the library.
@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 10))
struct CLIConcurrencyTests {
    @Test func fourPrefsSetLoopsAndALibraryWriterLoseNothing() async throws {
        let workspace = try CLIWorkspace()
        let path = workspace.store.path
        let loops = 4
        let setsPerLoop = 20
        let increments = 300
        let service = try RunningProcess(
            "prefs-harness", ["increment", path, "counter", "\(increments)"])
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for loop in 0..<loops {
                group.addTask {
                    var failures: [String] = []
                    for step in 0..<setsPerLoop {
                        let output = try await runChild(
                            "prefs", ["--file", path, "set", "loop\(loop).\(step)", "\(step)"])
                        if output.status != 0 { failures.append(output.standardError) }
                    }
                    return failures
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(try await service.nextLine() == "done")
        #expect(try await service.exit() == 0)
        #expect(failures == [])

        let values = try await workspace.storedValues()
        #expect(values["counter"] == .int(Int64(increments)))
        for loop in 0..<loops {
            for step in 0..<setsPerLoop {
                #expect(values["loop\(loop).\(step)"] == .int(Int64(step)))
            }
        }
        #expect(values.count == loops * setsPerLoop + 1)
    }
}
