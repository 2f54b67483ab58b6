import Foundation
import Preferences
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Helpers for the file backend's integrity tests: waits with deadlines that
/// never block Swift's cooperative pool, children that hold a store's lock,
/// and a file system with coarse timestamps.
package enum FileIntegrity {
    /// Runs blocking `body` on a dedicated thread; nil when it has not
    /// finished within `seconds` (the thread is then left to finish).
    package static func onThread<T: Sendable>(
        within seconds: Double, _ body: @escaping @Sendable () -> T
    ) async -> T? {
        let result: Result<T, any Error>? = await PreferencesTesting.outcome(
            within: .seconds(TestTime.scaled(seconds: seconds))
        ) { finish in
            Thread { finish(.success(body())) }.start()
        }
        return try? result?.get()
    }

    /// The outcome of `operation`; nil when it has not finished within `seconds`.
    package static func outcome<T: Sendable>(
        within seconds: Double, _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error>? {
        await PreferencesTesting.outcome(within: .seconds(TestTime.scaled(seconds: seconds))) {
            finish in
            Task { finish(await Result(catching: operation)) }
        }
    }

    /// `stat` of a path without following a final symlink.
    package static func linkOwner(_ path: String) -> UInt32? {
        fileStatus(path, followingLinks: false).map { UInt32($0.st_uid) }
    }

    package static func owner(_ path: String) -> UInt32? {
        fileStatus(path).map { UInt32($0.st_uid) }
    }

    package static func exists(_ path: String) -> Bool {
        fileStatus(path, followingLinks: false) != nil
    }
}

/// A `prefs-harness hold-lock` child: it takes a store's lock and holds it
/// until its standard input closes (or it is killed).
package final class LockHolder: Sendable {
    private let child: RunningProcess

    /// Starts the child and waits (at most 30 s) until it holds the lock.
    package init(_ url: URL) async throws {
        child = try ChildCommand(
            "prefs-harness", ["hold-lock", url.path], input: .open, output: .errorsShown
        ).start()
        let line = try await child.nextLine(timeout: .seconds(30))
        guard line == "locked" else {
            throw DeadlineExceeded(
                description: "\(child.commandLine) said \(line.debugDescription), not \"locked\"")
        }
    }

    package var pid: Int32 { child.process.processIdentifier }

    package func stop() { child.kill(SIGSTOP) }

    /// Closes the child's input: it lets the lock go and exits.
    package func release() { child.closeInput() }

    // Killed, not waited for: a deinit runs on whatever thread drops the
    // last reference, often one of the cooperative pool's.
    deinit { child.kill() }
}

/// A ramfs mounted for one test (root on Linux only). Its timestamps come
/// from the kernel's coarse clock and are never made finer on demand, so two
/// writes within one clock tick leave the same modification and change
/// times: the case S13 (<doc:StoreGuarantees>) is about.
package final class RamfsMount {
    package let directory: TemporaryDirectory
    package var url: URL { directory.url }

    package init?() {
        guard let directory = try? TemporaryDirectory() else { return nil }
        self.directory = directory
        guard FileSystemMount.mount("ramfs", at: directory.path, options: "mode=0700") else {
            return nil
        }
    }

    deinit { FileSystemMount.unmount(directory.path) }

    package static let isAvailable: Bool = RamfsMount() != nil
}
