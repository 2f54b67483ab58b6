import Foundation
import Preferences

/// The one thread every child of the tests is started on, which lives as
/// long as the test process.
///
/// A child started through ``ChildCommand`` gets SIGKILL when its parent
/// dies (`setpriv --pdeathsig KILL`), so a test run that is killed (a CI
/// timeout, a hang ended by hand) leaves none of its children running. But
/// Linux sends that signal when the *thread* that started the child ends,
/// not the process, and a thread of Swift's pool or of Dispatch may end
/// while the tests run on: so no child is started from one of those.
enum SpawningThread {
    /// A start the thread has yet to run, and what came of it.
    private final class Job: @unchecked Sendable {
        var start: (() throws -> Void)?
        var failure: (any Error)?
        let done = DispatchSemaphore(value: 0)

        init(_ start: @escaping () throws -> Void) { self.start = start }
    }

    private static let jobs = Locked<[Job]>([])
    private static let queued = DispatchSemaphore(value: 0)
    private static let thread: Void = {
        let thread = Thread {
            while true {
                queued.wait()
                let job = jobs.withLock { $0.removeFirst() }
                do { try job.start?() } catch { job.failure = error }
                job.start = nil
                job.done.signal()
            }
        }
        thread.name = "test children"
        thread.start()
    }()

    /// Runs `start` (a `Process.run()`) on the spawning thread, blocking
    /// the caller until it has returned: a child starts in milliseconds.
    static func run(_ start: @escaping () throws -> Void) throws {
        _ = thread
        let job = Job(start)
        jobs.withLock { $0.append(job) }
        queued.signal()
        job.done.wait()
        if let failure = job.failure { throw failure }
    }
}
