import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A user from the password database, and how to run a program as that
/// user: for `sudo prefs edit`, whose editor runs as the user who typed
/// `sudo`, as `sudoedit` does.
struct UserAccount: Sendable, Equatable {
    let name: String
    let uid: UInt32
    let gid: UInt32
    let home: String

    /// The entry named `name`, or nil when the database has none.
    static func named(_ name: String) -> UserAccount? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let entryName = entry.pw_name
        else { return nil }
        return UserAccount(
            name: String(cString: entryName), uid: UInt32(entry.pw_uid),
            gid: UInt32(entry.pw_gid), home: entry.pw_dir.map { String(cString: $0) } ?? "/")
    }

    /// The user who ran `sudo prefs …`: when this process runs as root and
    /// `$SUDO_USER` names a user of the password database other than root.
    /// Nil otherwise: then no one else is involved.
    static func sudoInvoker(environment: [String: String]) -> UserAccount? {
        guard geteuid() == 0, let name = environment["SUDO_USER"], !name.isEmpty,
            let account = named(name), account.uid != 0
        else { return nil }
        return account
    }

    /// The words that run a program as this user, its group and its
    /// supplementary groups, to put before the program and its arguments:
    /// `setpriv` from util-linux; on macOS, where there is none, `sudo`
    /// (root needs no password).
    ///
    /// - Throws: ``PreferencesError/io(operation:path:code:message:)`` when
    ///   neither is installed.
    func commandPrefix() throws -> [String] {
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv", "/sbin/setpriv"]
        if let path = setpriv.first(where: { access($0, X_OK) == 0 }) {
            return [path, "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--"]
        }
        #if canImport(Darwin)
            if access("/usr/bin/sudo", X_OK) == 0 {
                return ["/usr/bin/sudo", "-u", "#\(uid)", "-H", "--"]
            }
        #endif
        throw PreferencesError.io(
            operation: "run the editor as \(name): find", path: "setpriv", code: ENOENT,
            message: "no setpriv (util-linux) is installed")
    }
}

/// Whether this process's standard input is a terminal.
enum Terminal {
    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}
