import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// How the tests wait for a `prefs` child: every wait has a deadline and
/// fails with the command line and what the child printed, and no wait
/// holds a thread of Swift's cooperative pool.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIChildWaitTests {
    @Test func aPrefsChildPastItsDeadlineFailsWithItsCommandLineAndWhatItPrinted() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        // `prefs watch` prints the current state at once, then runs until signalled.
        let error = await #expect(throws: DeadlineExceeded.self) {
            try await workspace.prefs("watch", timeout: .seconds(15))
        }
        let message = error?.description ?? ""
        #expect(message.contains("prefs --file \(workspace.store.path) watch"), "\(message)")
        #expect(message.contains(#"{"key":"a","value":1"#), "\(message)")
    }

    /// More `prefs` children than the pool has threads wait for the store's
    /// lock; the task that releases it can only run if waiting on them
    /// leaves the pool free.
    @Test func awaitingPrefsChildrenLeavesThePoolFreeForOtherTasks() async throws {
        let workspace = try CLIWorkspace()
        let holder = try await LockHolder(workspace.store)
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 1
        let statuses = try await withThrowingTaskGroup(of: Int32?.self) { group in
            for index in 0..<count {
                group.addTask { try await workspace.prefs("set", "k\(index)", "\(index)").status }
            }
            group.addTask {
                holder.release()
                return nil
            }
            var statuses: [Int32] = []
            for try await status in group { if let status { statuses.append(status) } }
            return statuses
        }
        #expect(statuses == Array(repeating: 0, count: count))
        #expect(try await workspace.storedValues().count == count)
    }

    /// The blocking form is for threads of their own: called from a task
    /// (here through a synchronous function, which the compiler allows) it
    /// records an issue. The product does not exist, so the call fails at
    /// launch, after the report, and this test holds no thread of the pool.
    @Test func aBlockingRunFromATaskIsReported() {
        func blockingRun() throws -> ProcessOutput {
            try ChildCommand("no-such-product", []).runBlocking()
        }
        withKnownIssue {
            #expect(throws: (any Error).self) { try blockingRun() }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("cooperative pool") }
        }
    }

    /// A finished child lets go of its process and pipes: the suite runs
    /// hundreds of them, which would otherwise hold two descriptors each.
    @Test func aFinishedChildIsReleasedWithItsPipes() async throws {
        weak var released: RunningProcess?
        do {
            let child = try ChildCommand("prefs", ["--version"]).start()
            released = child
            let output = try await child.result()
            #expect(output.standardOutput == "prefs \(PreferencesVersion.current)\n")
        }
        // Its reader threads let go of it once they have seen the end of output.
        let gone = await eventually { released == nil }
        #expect(gone, "a finished child is still referenced, and so are its pipes")
    }
}
