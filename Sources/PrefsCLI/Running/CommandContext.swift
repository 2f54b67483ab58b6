import Foundation
import Preferences
import PreferencesEtcd

/// What a command on a store runs with: the resolved store (a file, or a
/// key in etcd), the key manifest in force, and the output.
struct CommandContext: RunContext {
    /// The command, for the synopsis in usage errors.
    let command: any PrefsCommand.Type
    let fileURL: URL
    /// The etcd cluster and key, with `--etcd` or `$PREFS_ETCD_ENDPOINTS`;
    /// then `fileURL` is unused (see ``storeName``).
    let etcd: (configuration: EtcdConfiguration, key: String)?
    /// The key manifest: `--manifest`, else `$PREFS_MANIFEST`, else the one
    /// the store published beside its file (7.6 in
    /// Sources/Preferences/Preferences.docc/CommandLineTool.md; not for
    /// etcd), else none.
    let manifest: PreferencesManifest?
    /// The secret keys and how their values are shown (`--reveal`); its
    /// scrubbing applies to ``output``'s standard error.
    let secrets: SecretRedaction
    /// Every program's manifest published beside the store, by program
    /// (F1 in Sources/Preferences/Preferences.docc/RollingOutAChange.md):
    /// a value any of them refuses is refused.
    private(set) var programManifests: [String: PreferencesManifest]
    let output: ToolOutput
    let stopSignal: @Sendable () async -> Void

    init(invocation: Invocation, tool: PrefsTool) throws {
        guard let command = invocation.command else {
            throw CommandFailure.usage("missing command", usage: nil)
        }
        let global = invocation.global
        self.command = command
        self.stopSignal = tool.stopSignal
        etcd = try Self.etcdTarget(global, environment: tool.environment, command: command)
        if let etcd {
            fileURL = URL(fileURLWithPath: etcd.key)
        } else if let file = global[GlobalOptions.file] {
            guard global[GlobalOptions.suite] == nil else {
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
                suite: global[GlobalOptions.suite] ?? PreferencesLocation.defaultSuite,
                environment: tool.environment)
        }
        manifest =
            command.readsManifest
            ? try Self.manifest(
                named: global[GlobalOptions.manifest] ?? tool.environment["PREFS_MANIFEST"],
                store: etcd == nil ? fileURL : nil)
            : nil
        let secrets = SecretRedaction(
            keys: Self.secretKeys(
                in: manifest,
                named: global[GlobalOptions.manifest] ?? tool.environment["PREFS_MANIFEST"],
                store: etcd == nil ? fileURL : nil),
            reveal: global[GlobalOptions.reveal])
        self.secrets = secrets
        var output = tool.output
        let standardError = output.standardError
        output.standardError = { standardError(secrets.scrub($0)) }
        self.output = output
        programManifests = [:]
        if command.readsManifest {
            programManifests = try Self.programManifests(storage())
        }
        // A key any program declares secret is secret to every command.
        for manifest in programManifests.values {
            secrets.declare(manifest.entries.filter(\.value.secret).keys)
        }
    }

    /// The keys declared secret by every manifest in force: the one given
    /// (`manifest`, read from `path`), and the one published beside the
    /// store. A manifest that cannot be read declares none here (the
    /// commands that use it report why); the store's document adds the
    /// keys it lists when it is opened.
    private static func secretKeys(
        in manifest: PreferencesManifest?, named path: String?, store: URL?
    ) -> Set<String> {
        var manifests = [manifest]
        if manifest == nil, let path, !path.isEmpty {
            manifests.append(try? Self.manifest(named: path, store: nil))
        }
        if let store {
            manifests.append(try? Self.manifest(named: nil, store: store))
        }
        var keys: Set<String> = []
        for case let manifest? in manifests {
            for (key, entry) in manifest.entries where entry.secret { keys.insert(key) }
        }
        return keys
    }

    /// The manifests of every program, as published beside the store; one
    /// that cannot be parsed is an error, as the store's own manifest is.
    static func programManifests(_ storage: any PreferencesStorage) throws -> [String:
        PreferencesManifest]
    {
        var manifests: [String: PreferencesManifest] = [:]
        for (program, bytes) in try storage.publishedManifests() {
            manifests[program] = try PreferencesManifest(
                jsonText: String(decoding: bytes, as: UTF8.self), source: program)
        }
        return manifests
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
        secrets.remember(value, forKey: key)
        if let problem = manifest?.validate(key: key, value: value) {
            throw CommandFailure(.invalidValue, problem.message)
        }
        if let problem = PreferencesManifest.refusal(of: value, forKey: key, by: programManifests) {
            throw CommandFailure(.invalidValue, problem.message)
        }
    }

    /// Opens the store; a corrupt file is an error, never reset. Live
    /// reads are off: `prefs` is not a replica of the store (F2 in
    /// Sources/Preferences/Preferences.docc/RollingOutAChange.md), and
    /// every write re-reads first all the same. Its writes keep the secret
    /// keys' values out of the history, and ``secrets`` learns the keys its
    /// document lists and their values.
    func openStore() async throws -> PreferencesStore {
        let store =
            if let etcd {
                try await PreferencesStore(
                    etcd: etcd.configuration, key: etcd.key, corruption: .fail, liveReads: false)
            } else {
                try await PreferencesStore(fileURL: fileURL, corruption: .fail, liveReads: false)
            }
        store.treatAsSecret(secrets.keys)
        secrets.learn(store.snapshot)
        return store
    }

    /// `failure` with the secret values it quotes scrubbed. When it failed
    /// before the store was read (a value `set` refused), the store is
    /// read first if it exists, for the secret keys its document lists.
    func scrubbed(_ failure: CommandFailure) async -> CommandFailure {
        if secrets.needsStore, etcd != nil || FileManager.default.fileExists(atPath: fileURL.path) {
            _ = try? await openStore()
        }
        return CommandFailure(failure.status, secrets.scrub(failure.message))
    }

    /// The store's backend, for what needs no open store (the replicas).
    func storage() throws -> any PreferencesStorage {
        if let etcd { return try EtcdStorage(configuration: etcd.configuration, key: etcd.key) }
        return FileStorage(fileURL: fileURL)
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
        _ global: ParsedOptions<GlobalOptions>, environment: [String: String],
        command: any PrefsCommand.Type
    ) throws -> (configuration: EtcdConfiguration, key: String)? {
        let given = global[GlobalOptions.etcd]
        let endpoints =
            given ?? (global[GlobalOptions.file] == nil ? environment["PREFS_ETCD_ENDPOINTS"] : nil)
        guard let endpoints, !endpoints.isEmpty || given != nil else {
            if global[GlobalOptions.key] != nil {
                throw CommandFailure.usage("--key needs --etcd ENDPOINTS", usage: command)
            }
            return nil
        }
        if global[GlobalOptions.file] != nil {
            throw CommandFailure.usage("use either --file or --etcd, not both", usage: command)
        }
        if global[GlobalOptions.key] != nil && global[GlobalOptions.suite] != nil {
            throw CommandFailure.usage("use either --key or --suite, not both", usage: command)
        }
        let configuration: EtcdConfiguration
        do {
            configuration = try EtcdConfiguration(
                endpoints: endpoints,
                credentials: EtcdCredentials.fromEnvironment(
                    environment, passwordFile: global[GlobalOptions.etcdPasswordFile]))
        } catch PreferencesError.invalidValue(let what, let reason) {
            throw CommandFailure.usage("\(what): \(reason)", usage: command)
        }
        if let key = global[GlobalOptions.key] {
            guard !key.isEmpty else {
                throw CommandFailure.usage("--key needs a key", usage: command)
            }
            return (configuration, key)
        }
        let suite = global[GlobalOptions.suite] ?? PreferencesLocation.defaultSuite
        return (configuration, try EtcdStorage.key(forSuite: suite))
    }
}
