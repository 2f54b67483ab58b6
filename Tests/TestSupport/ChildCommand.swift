import Foundation
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process a test starts: the program and its arguments, its
/// environment, where its input comes from and its output goes, and the
/// user it runs as. Every child of the tests is one of these, started by
/// ``start()`` or run to its end by ``run(timeout:)``, so each gets the same
/// clean environment, deadlines and failure messages.
///
/// ```swift
/// let output = try await ChildCommand(
///     "prefs", ["--file", path, "set", "a", "1"], user: nobodyUser
/// ).run()
/// ```
package struct ChildCommand: Sendable {
    /// Where the child's standard input comes from.
    package enum Input: Sendable {
        /// The null device: the child reads end of file.
        case none
        /// This text, then end of file.
        case text(String)
        /// A pipe the test writes to (``RunningProcess/send(_:)``) and
        /// closes (``RunningProcess/closeInput()``).
        case open
    }

    /// Where the child's standard output and standard error go.
    package enum Output: Sendable {
        /// Both read by the test, apart.
        case separate
        /// Standard error into standard output, interleaved as written.
        case merged
        /// Standard output read by the test; standard error to the test's own.
        case errorsShown
        /// Both into the file at this path (created when missing), unread.
        case log(String)
    }

    package var executable: URL
    package var arguments: [String]
    package var environment: [String: String]
    package var input: Input
    package var output: Output
    /// The uid and gid the child runs as, through `setpriv` (root only, see
    /// ``canSwitchUser``); nil runs it as this process's user.
    package var user: UInt32?
    /// The program as failure messages show it.
    private var shownName: String

    /// The program at `path` (a shell, a system tool) with `arguments`.
    /// `environment` defaults to ``cleanEnvironment()``.
    package init(
        program path: String, _ arguments: [String], environment: [String: String]? = nil,
        input: Input = .none, output: Output = .separate, user: UInt32? = nil
    ) {
        executable = URL(fileURLWithPath: path)
        self.arguments = arguments
        self.environment = environment ?? cleanEnvironment()
        self.input = input
        self.output = output
        self.user = user
        shownName = path
    }

    /// A built product (`prefs`, `prefs-harness`) with `arguments`.
    package init(
        _ product: String, _ arguments: [String], environment: [String: String]? = nil,
        input: Input = .none, output: Output = .separate, user: UInt32? = nil
    ) {
        self.init(
            program: productURL(product).path, arguments, environment: environment,
            input: input, output: output, user: user)
        shownName = product
    }

    /// Where `setpriv` (util-linux) is, through which every child starts:
    /// it sets the child's parent-death signal, and its user.
    package static let setpriv = "/usr/bin/setpriv"

    /// Whether children get SIGKILL when the test process dies: with
    /// `setpriv`, on Linux. Elsewhere a killed run may leave children.
    package static let diesWithTheTests = FileManager.default.isExecutableFile(atPath: setpriv)

    /// The program started and its arguments: `setpriv`'s, which sets the
    /// child's parent-death signal to SIGKILL (so that a test run killed
    /// mid-way leaves no child running; see `SpawningThread`) and, with
    /// ``user``, its uid and gid, then runs the program in its place.
    var launched: (executable: URL, arguments: [String]) {
        guard Self.diesWithTheTests || user != nil else { return (executable, arguments) }
        let asUser = user.map { ["--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
        return (
            URL(fileURLWithPath: Self.setpriv),
            ["--pdeathsig", "KILL"] + asUser + [executable.path] + arguments
        )
    }

    /// The command as a reader would type it, for failure messages.
    package var commandLine: String {
        ([shownName] + arguments).map(Self.quoted).joined(separator: " ")
            + (user.map { " (as uid \($0))" } ?? "")
    }

    private static func quoted(_ argument: String) -> String {
        let plain =
            !argument.isEmpty
            && argument.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) || "-_./=:,+@%".unicodeScalars.contains($0)
            }
        return plain ? argument : "'" + argument.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// A child that could not be started: its program is missing.
    package struct LaunchFailure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts the child.
    ///
    /// - Throws: ``LaunchFailure`` when the program is not an executable file.
    package func start() throws -> RunningProcess { try RunningProcess(self) }

    /// Runs the child to its end and returns its status and output. The
    /// wait holds no thread of Swift's cooperative pool and has a deadline:
    /// a child still running after `timeout` is killed and the call throws
    /// ``DeadlineExceeded`` with the command line and what the child printed.
    @discardableResult
    package func run(timeout: Duration = .seconds(120)) async throws -> ProcessOutput {
        try await start().result(timeout: timeout)
    }

    /// ``run(timeout:)`` for code on a thread of its own (a `Thread`, a
    /// dispatch queue, a store's transform), which it blocks. From a task it
    /// records an issue: there it would hold a thread of the cooperative pool.
    @available(*, noasync, message: "await run(timeout:), which waits off the cooperative pool")
    @discardableResult
    package func runBlocking(
        timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessOutput {
        if withUnsafeCurrentTask(body: { $0 != nil }) {
            Issue.record(
                "\(commandLine) blocks a thread of Swift's cooperative pool: await run()",
                sourceLocation: sourceLocation)
        }
        return try start().blockingResult(timeout: timeout)
    }
}

/// Runs a product to its end (``ChildCommand/run(timeout:)``), with `input`
/// as its standard input and, with `user`, as that uid and gid.
@discardableResult
package func runChild(
    _ product: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil, as user: UInt32? = nil, timeout: Duration = .seconds(120)
) async throws -> ProcessOutput {
    try await ChildCommand(
        product, arguments, environment: environment, input: input.map { .text($0) } ?? .none,
        user: user
    ).run(timeout: timeout)
}

/// Runs the program at `path` (a shell, a system tool) to its end, as
/// ``runChild(_:_:environment:input:as:timeout:)`` runs a product.
@discardableResult
package func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil,
    timeout: Duration = .seconds(60)
) async throws -> ProcessOutput {
    try await ChildCommand(program: path, arguments, environment: environment).run(timeout: timeout)
}

/// Runs a system program (`chmod`, `mv`, `dd` …) to its end and returns its
/// status, as ``runProgram(_:_:environment:timeout:)``; a missing program is -1.
@discardableResult
package func runTool(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60))
    async throws -> Int32
{
    guard FileManager.default.isExecutableFile(atPath: path) else { return -1 }
    return try await runProgram(path, arguments, timeout: timeout).status
}

/// Whether children can be started as another user (root with `setpriv`).
package let canSwitchUser: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: ChildCommand.setpriv)

/// The unprivileged user the permission tests run children as.
package let nobodyUser: UInt32 = 65534

/// This process's environment without what changes how the library and
/// `prefs` behave (`PREFS_*`, `XDG_CONFIG_HOME`, `SUDO_*`, `VISUAL`,
/// `EDITOR`): what every child a test starts gets, plus what the test sets,
/// so a variable in the developer's shell never changes a result.
package func cleanEnvironment() -> [String: String] {
    ProcessInfo.processInfo.environment.filter { key, _ in
        !key.hasPrefix("PREFS_") && !key.hasPrefix("SUDO_")
            && !["XDG_CONFIG_HOME", "VISUAL", "EDITOR"].contains(key)
    }
}
