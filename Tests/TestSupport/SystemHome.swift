import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A system scope of its own for one test: a fresh `PREFS_SYSTEM_HOME`
/// (root's, mode 0755, as `/var/lib/prefs` is) and, when given an owner,
/// the suite `svc`'s directory in it, given to that user as systemd's
/// `StateDirectory=prefs/svc` would.
package struct SystemHome: Sendable {
    package let home: TemporaryDirectory
    package let suite = "svc"

    /// The suite's directory, `$PREFS_SYSTEM_HOME/svc`.
    package var directory: URL { home.url.appendingPathComponent(suite, isDirectory: true) }
    /// The suite's store, `$PREFS_SYSTEM_HOME/svc/svc.json`.
    package var store: URL { directory.appendingPathComponent(suite + ".json") }
    /// A file or folder beside the store.
    package func beside(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// ``cleanEnvironment()`` with `PREFS_SYSTEM_HOME` set to ``home``.
    package var environment: [String: String] {
        cleanEnvironment().merging(["PREFS_SYSTEM_HOME": home.path]) { $1 }
    }

    /// A home; with `owner`, the suite's directory too, with `mode`.
    package init(owner: UInt32? = nil, mode: mode_t = 0o700) throws {
        home = try TemporaryDirectory()
        chmod(home.path, 0o755)
        if let owner {
            try FileManager.default.createDirectory(
                at: home.url.appendingPathComponent(suite), withIntermediateDirectories: false)
            giveAway(home.path + "/" + suite, to: owner)
            chmod(home.path + "/" + suite, mode)
        }
    }

    /// Runs `prefs --system --suite svc ARGUMENTS`, as `user` when given.
    @discardableResult
    package func prefs(_ arguments: [String], as user: UInt32? = nil) async throws
        -> ProcessOutput
    {
        try await runChild(
            "prefs", ["--system", "--suite", suite] + arguments, environment: environment,
            as: user)
    }
}
