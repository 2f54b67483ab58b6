/// The editor `prefs edit` opens, and how it is started.
///
/// The command is `$VISUAL`, else `$EDITOR`, else `vi` (an empty variable
/// counts as unset). It is a shell command line, as `git` takes its
/// editor: `/bin/sh -c '<command> "$@"' <command> <file>`, so a value with
/// arguments (`code --wait`, `emacs -nw`) or quoting works, and the copy's
/// path reaches the editor as one argument of its own, never pasted into
/// the shell's text. Under `sudo` the shell and the editor run as the user
/// who typed it (``UserAccount/commandPrefix()``), with `HOME`, `USER` and
/// `LOGNAME` set to that user's.
struct EditorCommand: Sendable {
    /// The command line, as the variable gave it.
    let commandLine: String
    /// Whom the editor runs as; nil for this process's user.
    let user: UserAccount?
    /// The editor's environment.
    let environment: [String: String]

    init(environment: [String: String], user: UserAccount?) {
        commandLine =
            [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first {
                !$0.allSatisfy(\.isWhitespace)
            } ?? "vi"
        self.user = user
        var environment = environment
        if let user {
            environment["HOME"] = user.home
            environment["USER"] = user.name
            environment["LOGNAME"] = user.name
        }
        self.environment = environment
    }

    /// The program and its arguments that edit `path`.
    func arguments(editing path: String) throws -> [String] {
        let shell = ["/bin/sh", "-c", commandLine + " \"$@\"", commandLine, path]
        return try (user?.commandPrefix() ?? []) + shell
    }

    /// Runs the editor on `path` in this terminal and returns how it ended.
    func run(editing path: String) async throws -> ForegroundProcess.Ending {
        try await ForegroundProcess.run(arguments(editing: path), environment: environment)
    }
}
