import Foundation
import Synchronization
import Testing

@testable import Preferences

/// `prefs` takes the store's lock (S3, §7.4): nothing is lost when it runs
/// beside other `prefs` processes and a service editing through the library.
@Suite struct CLIConcurrencyTests {
    @Test func fourPrefsSetLoopsAndALibraryWriterLoseNothing() async throws {
        let workspace = try CLIWorkspace()
        let path = workspace.store.path
        let loops = 4
        let setsPerLoop = 20
        let increments = 300
        let service = try RunningProcess(
            "prefs-harness", ["increment", path, "counter", "\(increments)"])
        let failures = Mutex<[String]>([])
        await onThreads(loops) { loop in
            for step in 0..<setsPerLoop {
                do {
                    let output = try run(
                        "prefs", ["--file", path, "set", "loop\(loop).\(step)", "\(step)"])
                    if output.status != 0 {
                        failures.withLock { $0.append(output.standardError) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(try await service.nextLine() == "done")
        #expect(try await service.exit() == 0)
        #expect(failures.withLock { $0 } == [])

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
