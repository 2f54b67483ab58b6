/// The exit statuses of `prefs` (7.3 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
///
/// | status | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | the key is not set (`get`, `delete`); for `diff`, the store differs from the file |
/// | 2 | usage: unknown command or option, missing argument, bad suite name |
/// | 3 | a value (or key) invalid for its type, the manifest or the store's limits |
/// | 4 | the store or a legacy file is corrupt or unreadable as its format |
/// | 5 | I/O error: permission, disk full, lock |
/// | 6 | a `--wait` that timed out before every live replica applied the change |
public enum ExitStatus: Int32, Sendable {
    /// The command did what was asked.
    case success = 0
    /// `get` or `delete` of a key that is not stored.
    case keyNotSet = 1
    /// The command line itself is wrong.
    case usage = 2
    /// A value (or key) that does not fit its type, the manifest or the store's limits.
    case invalidValue = 3
    /// The store file or the legacy file is not valid in its format.
    case corrupt = 4
    /// A system call failed.
    case ioError = 5
    /// `--wait` gave up before every live replica reported the change.
    case waitTimedOut = 6

    /// `diff` found differences: status 1, as `diff(1)` and `git diff
    /// --exit-code` exit (`diff` in the commands table of
    /// Sources/Preferences/Preferences.docc/CommandLineTool.md).
    public static let differences = ExitStatus.keyNotSet
}

/// Ends a command with `status` and no error line: an outcome, not a
/// failure (`diff` finding differences). ``PrefsTool/run(_:)`` returns the
/// status; whatever the command printed stays printed.
struct CommandExit: Error, Sendable {
    let status: ExitStatus
}
