import Foundation
import Testing

/// A suite trait for the suites that load the machine: they take turns,
/// so that a run of the whole suite on two cores never has more than two
/// etcd clusters of a test's own, or four suites of many processes, at once.
///
/// `swift test` starts every test of the run at once. Most of them wait on
/// the store in this process, but some start a three-member etcd cluster or
/// several processes that write at once; all of those together (up to 44
/// etcd servers and 54 children measured on two cores) starved each other
/// until members missed their heartbeats and children their deadlines. A
/// suite with this trait waits for its turn before its first test starts
/// and holds it until its last ends. The wait is not counted against any
/// test's time limit: Swift Testing applies a suite's scope outside the
/// time limits of its tests.
///
/// Mark such a suite `.serialized` too, so that its own tests take turns.
package struct TakingTurns: SuiteTrait, TestScoping {
    /// What the suite runs that loads the machine.
    package enum Load: Sendable {
        /// etcd clusters of its own (three members, or one with special
        /// settings), and children talking to them: counts twice.
        case clusters
        /// Several processes writing at once, or killed in a loop.
        case processes
        /// The process's disk recorder (`DiskRecorder`), which records every
        /// call of the process from `start()` to `stop()`: one suite at a
        /// time, apart from the turns above.
        case diskRecorder
    }

    package let load: Load

    package var isRecursive: Bool { false }

    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? self : nil
    }

    package func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let turns = load == .diskRecorder ? Turns.recorder : Turns.shared
        let weight = load == .clusters ? 2 : 1
        await turns.acquire(weight)
        do {
            try await function()
        } catch {
            await turns.release(weight)
            throw error
        }
        await turns.release(weight)
    }
}

extension Trait where Self == TakingTurns {
    /// The suite takes turns with the other suites that load the machine.
    package static func takesTurns(_ load: TakingTurns.Load) -> Self { TakingTurns(load: load) }
}

/// The turns: a weighted semaphore, first come first served, whose waits
/// suspend a task and never hold a thread.
actor Turns {
    /// Four units: two suites with clusters, one with clusters and two with
    /// many processes, or four with many processes. Measured on two cores:
    /// one unit made the run half as long again (the suites waited in line
    /// after the rest had finished); everything at once, up to 44 etcd
    /// servers and 54 children, starved the members and children.
    static let shared = Turns(capacity: 4)
    /// One suite at a time records the disk.
    static let recorder = Turns(capacity: 1)

    private let capacity: Int
    init(capacity: Int) { self.capacity = capacity }

    private var inUse = 0
    private var waiting: [(weight: Int, resume: CheckedContinuation<Void, Never>)] = []

    func acquire(_ weight: Int) async {
        if waiting.isEmpty && inUse + weight <= capacity {
            inUse += weight
            return
        }
        await withCheckedContinuation { waiting.append((weight, $0)) }
    }

    func release(_ weight: Int) {
        inUse -= weight
        while let first = waiting.first, inUse + first.weight <= capacity {
            waiting.removeFirst()
            inUse += first.weight
            first.resume.resume()
        }
    }
}
