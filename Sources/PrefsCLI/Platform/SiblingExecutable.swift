import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program installed in the same directory as this process's executable,
/// and replacing this process with it: how `prefs` runs `prefs-tls`.
enum SiblingExecutable {
    /// The path of `name` beside this process's executable (symbolic links
    /// resolved, so a `prefs` linked into `/usr/local/bin` finds the
    /// `prefs-tls` installed beside the real file), or nil when this
    /// process's executable cannot be found.
    static func path(_ name: String) -> String? {
        guard let executable = ownExecutablePath(), let slash = executable.lastIndex(of: "/") else {
            return nil
        }
        return String(executable[...slash]) + name
    }

    /// Replaces this process with the program at `path`, which gets
    /// `arguments` after its own path as its command line and this
    /// process's environment. Returns only when that failed: the system's
    /// words for why (`No such file or directory`).
    static func replaceProcess(with path: String, arguments: [String]) -> String {
        let words = ([path] + arguments).map { strdup($0) }
        defer { words.forEach { free($0) } }
        execv(path, words + [nil])
        return String(cString: strerror(errno))
    }
}
