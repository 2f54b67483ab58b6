#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The file backend of a named suite, shared by the library and `prefs`
/// so that both treat the system scope's directory alike
/// (<doc:ServiceSettings>).
extension PreferencesLocation {
    /// The backend of `suite` in `scope`. In the system scope the suite's
    /// directory is never created: a write while it is missing fails with
    /// ``missingSystemDirectory(_:suite:)``'s advice.
    package static func storage(
        suite: String, scope: PreferencesScope,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        limits: PreferencesLimits = PreferencesLimits()
    ) throws -> FileStorage {
        let url = try fileURL(suite: suite, scope: scope, environment: environment)
        return FileStorage(
            fileURL: url, maxFileSize: limits.maxFileSize, lockTimeout: limits.lockTimeout,
            orphanSweepInterval: .seconds(60),
            missingDirectoryAdvice: scope == .system
                ? systemDirectoryAdvice(url.deletingLastPathComponent().path, suite: suite)
                : nil)
    }

    /// Throws ``missingSystemDirectory(_:suite:)`` unless the directory of
    /// `suite` in the system scope exists.
    package static func checkSystemDirectory(
        suite: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let directory = try fileURL(suite: suite, scope: .system, environment: environment)
            .deletingLastPathComponent().path
        if try Platform.fileStamp(directory)?.isDirectory != true {
            throw missingSystemDirectory(directory, suite: suite)
        }
    }

    /// The error for a missing system-scope directory: one line naming it
    /// and how to make it.
    static func missingSystemDirectory(_ directory: String, suite: String) -> PreferencesError {
        .io(
            operation: "open the store's directory", path: directory, code: Platform.notFound,
            message: systemDirectoryAdvice(directory, suite: suite))
    }

    /// systemd's `StateDirectory=` is named only for the directory it
    /// makes: `/var/lib/prefs/NAME`, not one `PREFS_SYSTEM_HOME` moved.
    private static func systemDirectoryAdvice(_ directory: String, suite: String) -> String {
        let systemd =
            directory == "/var/lib/prefs/" + suite
            ? "StateDirectory=prefs/\(suite) in its systemd unit, or " : ""
        return "it does not exist, and the system scope's store never creates it; create it for "
            + "the service's user: \(systemd)install -d -m 0700 -o USER -g GROUP \(directory)"
    }
}
