import Foundation
import Preferences

/// One run of one command: the parsed invocation, the resolved store file,
/// and the output.
struct CommandContext: Sendable {
    let invocation: Invocation
    let command: CommandSpec
    let fileURL: URL
    /// The key manifest: `--manifest`, else `$PREFS_MANIFEST`, else the one
    /// the store published beside its file (SPEC 7.6), else none.
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
        manifest =
            command.name == "path"
            ? nil
            : try Self.manifest(
                named: invocation.value("--manifest") ?? tool.environment["PREFS_MANIFEST"],
                store: fileURL)
    }

    /// The manifest at `path`, else the one published beside `store` if
    /// there is one. A manifest that exists but cannot be read is an error
    /// (exit 4, or 5 for an I/O error), never silently ignored: commands
    /// would otherwise type and default keys differently from the service.
    static func manifest(named path: String?, store: URL) throws -> PreferencesManifest? {
        if let path, !path.isEmpty {
            return try PreferencesManifest.load(from: URL(fileURLWithPath: path))
        }
        let published = FileStorage(fileURL: store).manifestPath
        do {
            return try PreferencesManifest.load(from: URL(fileURLWithPath: published))
        } catch PreferencesError.io(_, _, let code, _) where code == ENOENT || code == ENOTDIR {
            return nil
        } catch PreferencesError.corrupted(_, let reason) {
            // Over the size limit.
            throw PreferencesError.invalidManifest(file: published, reason: reason)
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
