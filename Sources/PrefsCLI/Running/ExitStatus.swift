/// The exit statuses of `prefs` (7.3 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
///
/// | status | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | the key is not set (`get`, `delete`) |
/// | 2 | usage: unknown command or option, missing argument, bad suite name |
/// | 3 | a value (or key) invalid for its type, the manifest or the store's limits |
/// | 4 | the store or a legacy file is corrupt or unreadable as its format |
/// | 5 | I/O error: permission, disk full, lock |
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
}
