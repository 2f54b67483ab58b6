import Foundation
import Preferences
import PreferencesEtcd

/// One run of one command: the parsed invocation, the resolved store file,
/// and the output.
struct CommandContext: Sendable {
    let invocation: Invocation
    let command: CommandSpec
    let fileURL: URL
    /// The etcd cluster and key, with `--etcd` or `$PREFS_ETCD_ENDPOINTS`;
    /// then `fileURL` is unused (see ``storeName``).
    let etcd: (configuration: EtcdConfiguration, key: String)?
    /// The key manifest: `--manifest`, else `$PREFS_MANIFEST`, else the one
    /// the store published beside its file (7.6 in
    /// Sources/Preferences/Preferences.docc/CommandLineTool.md; not for
    /// etcd), else none.
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
        etcd = try Self.etcdTarget(invocation, environment: tool.environment, command: command)
        if let etcd {
            fileURL = URL(fileURLWithPath: etcd.key)
        } else if let file = invocation.value("--file") {
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
                store: etcd == nil ? fileURL : nil)
    }

    /// The manifest at `path`, else the one published beside `store` if
    /// there is one. A manifest that exists but cannot be read is an error
    /// (exit 4, or 5 for an I/O error), never silently ignored: commands
    /// would otherwise type and default keys differently from the service.
    static func manifest(named path: String?, store: URL?) throws -> PreferencesManifest? {
        if let path, !path.isEmpty {
            return try PreferencesManifest.load(from: URL(fileURLWithPath: path))
        }
        guard let store else { return nil }
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
        if let etcd {
            return try await PreferencesStore(
                etcd: etcd.configuration, key: etcd.key, corruption: .fail)
        }
        return try await PreferencesStore(fileURL: fileURL, corruption: .fail)
    }

    /// The store as the output names it: the file's path, or for etcd the
    /// key exactly as given and the endpoints (`KEY on etcd URL,URL`).
    var storeName: String {
        guard let etcd else { return fileURL.path }
        return "\(etcd.key) on etcd \(etcd.configuration.endpointList)"
    }

    /// The etcd cluster and key when `--etcd` (or `$PREFS_ETCD_ENDPOINTS`
    /// without `--file`) selects one: `--key`, else `/prefs/` and the suite.
    private static func etcdTarget(
        _ invocation: Invocation, environment: [String: String], command: CommandSpec
    ) throws -> (configuration: EtcdConfiguration, key: String)? {
        let given = invocation.value("--etcd")
        let endpoints =
            given ?? (invocation.value("--file") == nil ? environment["PREFS_ETCD_ENDPOINTS"] : nil)
        guard let endpoints, !endpoints.isEmpty || given != nil else {
            if invocation.value("--key") != nil {
                throw CommandFailure.usage("--key needs --etcd ENDPOINTS", usage: command)
            }
            return nil
        }
        if invocation.value("--file") != nil {
            throw CommandFailure.usage("use either --file or --etcd, not both", usage: command)
        }
        if invocation.value("--key") != nil && invocation.value("--suite") != nil {
            throw CommandFailure.usage("use either --key or --suite, not both", usage: command)
        }
        let configuration: EtcdConfiguration
        do {
            configuration = try EtcdConfiguration(
                endpoints: endpoints,
                credentials: EtcdCredentials.fromEnvironment(
                    environment, passwordFile: invocation.value("--etcd-password-file")))
        } catch PreferencesError.invalidValue(let what, let reason) {
            throw CommandFailure.usage("\(what): \(reason)", usage: command)
        }
        if let key = invocation.value("--key") {
            guard !key.isEmpty else {
                throw CommandFailure.usage("--key needs a key", usage: command)
            }
            return (configuration, key)
        }
        let suite = invocation.value("--suite") ?? PreferencesLocation.defaultSuite
        return (configuration, try EtcdStorage.key(forSuite: suite))
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
        case "path": output.print(etcd?.key ?? fileURL.path)
        default: throw CommandFailure.usage("unknown command '\(command.name)'", usage: nil)
        }
    }
}
