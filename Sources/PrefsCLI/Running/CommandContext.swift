import Foundation
import Preferences

/// One run of one command: the parsed invocation, the resolved store file,
/// and the output.
struct CommandContext: Sendable {
    let invocation: Invocation
    let command: CommandSpec
    let fileURL: URL
    /// The key manifest given with `--manifest`, if any.
    let manifest: PreferencesManifest?
    let output: ToolOutput
    let stopSignal: @Sendable () async -> Void

    init(invocation: Invocation, tool: PrefsTool) throws {
        guard let command = invocation.command else {
            throw CommandFailure.usage("missing command", usage: nil)
        }
        self.invocation = invocation
        self.command = command
        self.output = tool.output
        self.stopSignal = tool.stopSignal
        manifest = try invocation.value("--manifest").map { path in
            try PreferencesManifest.load(from: URL(fileURLWithPath: path))
        }
        if let file = invocation.value("--file") {
            guard invocation.value("--suite") == nil else {
                throw CommandFailure.usage("use either --file or --suite, not both", usage: command)
            }
            guard !file.isEmpty else {
                throw CommandFailure.usage("--file needs a path", usage: command)
            }
            let base = URL(
                fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
            fileURL = URL(fileURLWithPath: file, relativeTo: base).standardizedFileURL
        } else {
            fileURL = try PreferencesLocation.fileURL(
                suite: invocation.value("--suite") ?? PreferencesLocation.defaultSuite,
                environment: tool.environment)
        }
    }

    /// Fails with status 3 when the manifest declares `key` and `value` does not fit.
    func validate(_ value: PreferenceValue, forKey key: String) throws {
        if let problem = manifest?.validate(key: key, value: value) {
            throw CommandFailure(.invalidValue, problem.message)
        }
    }

    /// The positional argument at `index`.
    func argument(_ index: Int) -> String { invocation.arguments[index] }

    /// Opens the store; a corrupt file is an error, never reset.
    func openStore() async throws -> PreferencesStore {
        try await PreferencesStore(fileURL: fileURL, corruption: .fail)
    }

    func runCommand() async throws {
        switch command.name {
        case "get": try await GetCommand.run(self)
        case "set": try await SetCommand.run(self)
        case "delete": try await DeleteCommand.run(self)
        case "list": try await ListCommand.run(self)
        case "clear": try await ClearCommand.run(self)
        case "import": try await ImportCommand.run(self)
        case "export": try await ExportCommand.run(self)
        case "watch": try await WatchCommand.run(self)
        case "check": try await CheckCommand.run(self)
        case "path": output.print(fileURL.path)
        default: throw CommandFailure.usage("unknown command '\(command.name)'", usage: nil)
        }
    }
}
