#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `prefs` command-line tool: parses the arguments, runs one command
/// against a preferences store, and returns the exit status.
///
/// The executable is a thin wrapper around it, and tests call it directly:
///
/// ```swift
/// let status = await PrefsTool().run(["--suite", "com.example.app", "get", "language"])
/// exit(status.rawValue)
/// ```
///
/// Every read and write goes through `PreferencesStore`, so `prefs` takes
/// the same lock as the library (7.4 in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md) and a failing
/// command leaves the store as it was. See ``ExitStatus`` for what each
/// status means.
public struct PrefsTool: Sendable {
    /// The environment used to find suites' files (`PREFS_HOME`, `XDG_CONFIG_HOME`, `HOME`).
    public var environment: [String: String]
    /// Where results and errors go.
    public var output: ToolOutput
    /// How `https://` etcd endpoints are reached: refused by default;
    /// `prefs` hands them to `prefs-tls`, which has TLS (see ``HTTPS``).
    public var https: HTTPS
    /// Starts catching what stops `watch`, and yields when it comes: by
    /// default SIGINT or SIGTERM.
    var stopSignal: @Sendable () -> AsyncStream<Void> = { TerminationSignals.caught() }

    /// Creates the tool for this process's environment and terminal, or others.
    public init(
        environment: [String: String] = PrefsTool.processEnvironment,
        output: ToolOutput = .terminal, https: HTTPS = .refused
    ) {
        self.environment = environment
        self.output = output
        self.https = https
    }

    /// Runs the command line `arguments` (without the program name).
    public func run(_ arguments: [String]) async -> ExitStatus {
        let parser = CommandLineParser()
        do {
            let invocation = try parser.parse(arguments)
            if invocation.wantsHelp {
                output.standardOutput(invocation.command.map(HelpText.command) ?? HelpText.tool)
                return .success
            }
            if invocation.wantsVersion {
                output.print(HelpText.version)
                return .success
            }
            guard let command = invocation.command else {
                throw CommandFailure.usage("missing command", usage: nil)
            }
            try https.handOff(arguments, invocation, environment: environment)
            try await execute(command, invocation)
            return .success
        } catch let exit as CommandExit {
            return exit.status
        } catch {
            let failure = CommandFailure(error)
            output.error(failure.message)
            return failure.status
        }
    }

    /// Every command, in the order `prefs --help` lists them. Parsing,
    /// running, help and the completion scripts all read this list.
    static let commands: [any PrefsCommand.Type] = [
        GetCommand.self, SetCommand.self, DeleteCommand.self, EditCommand.self,
        ListCommand.self, ClearCommand.self, ImportCommand.self, ExportCommand.self,
        DiffCommand.self, ApplyCommand.self, WatchCommand.self, LogCommand.self,
        RevertCommand.self, RestoreCommand.self, CheckCommand.self, ReplicasCommand.self,
        PathCommand.self,
        HelpCommand.self, CompletionsCommand.self,
    ]

    /// Builds the command's context (store errors come first), then the
    /// command from its parsed options, then runs it.
    private func execute<Command: PrefsCommand>(
        _ command: Command.Type, _ invocation: Invocation
    ) async throws {
        let context = try Command.Context(invocation: invocation, tool: self)
        let parsed = try Command(invocation.options(for: Command.self))
        do {
            try await parsed.run(context)
        } catch let exit as CommandExit {
            throw exit
        } catch {
            throw await context.scrubbed(CommandFailure(error))
        }
    }
}
