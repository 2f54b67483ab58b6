import Preferences
import PreferencesEtcd

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The store the commands work on, resolved once from the global options and
/// the environment: a key in etcd (`--etcd`, or `$PREFS_ETCD_ENDPOINTS`
/// without `--file`), else a file (`--file`, else the suite's file). Commands
/// reach it only through its backend, so none asks which backend it is.
struct StoreTarget: Sendable {
    /// The store's backend.
    let storage: any PreferencesStorage
    /// The store as the output names it: the file's path, or for etcd the
    /// key exactly as given and the endpoints (`KEY on etcd URL,URL`).
    let name: String

    init(
        _ global: ParsedOptions<GlobalOptions>, environment: [String: String],
        tls: EtcdConfiguration.TLS?, command: any PrefsCommand.Type
    ) throws {
        if let (configuration, key) = try Self.etcd(global, environment, tls, command) {
            storage = try EtcdStorage(configuration: configuration, key: key)
            name = "\(key) on etcd \(configuration.endpointList)"
        } else {
            storage = try Self.file(global, environment, command)
            name = storage.location
        }
    }

    /// What `prefs path` prints: the file's path, or the etcd key.
    var path: String { storage.location }

    /// The name of a copy to edit: the store's name ending in `.json`, so
    /// that editors show JSON (`default.json` for the suite `default`'s file
    /// or the etcd key `/prefs/default`).
    var copyName: String {
        let name = URL(fileURLWithPath: path).lastPathComponent
        if name.isEmpty || name.hasPrefix(".") || name == "/" { return "values.json" }
        return name.hasSuffix(".json") ? name : name + ".json"
    }

    /// Whether the backend holds a document, or cannot tell: opening the
    /// store then reads something.
    var exists: Bool { (try? storage.currentRevision()) != .absent }

    /// Opens the store; a corrupt document is an error, never reset. Live
    /// reads are off: `prefs` is not a replica of the store (F2 in
    /// Sources/Preferences/Preferences.docc/RollingOutAChange.md), and
    /// every write re-reads first all the same.
    func openStore() async throws -> PreferencesStore {
        try await PreferencesStore(storage: storage, corruption: .fail, liveReads: false)
    }

    /// The key manifest the store published (7.6 in
    /// Sources/Preferences/Preferences.docc/CommandLineTool.md), or nil. One
    /// that exists but cannot be read is an error (exit 4, or 5 for an I/O
    /// error), never silently ignored: commands would otherwise type and
    /// default keys differently from the service.
    func publishedManifest() throws -> PreferencesManifest? {
        guard let (bytes, location) = try storage.manifests?.storeManifest() else { return nil }
        return try PreferencesManifest(
            jsonText: String(decoding: bytes, as: UTF8.self), source: location)
    }

    /// The manifests of every program, as published beside the store; one
    /// that cannot be parsed is an error, as the store's own manifest is.
    func programManifests() throws -> [String: PreferencesManifest] {
        guard let published = storage.manifests else { return [:] }
        return try PreferencesManifest.published(in: published, skippingInvalid: false)
    }

    /// `--file` made absolute, else the suite's file in its scope
    /// (`--system`: Sources/Preferences/Preferences.docc/ServiceSettings.md).
    /// The system scope's directory must exist, except to print its path.
    private static func file(
        _ global: ParsedOptions<GlobalOptions>, _ environment: [String: String],
        _ command: any PrefsCommand.Type
    ) throws -> FileStorage {
        guard let file = global[GlobalOptions.file] else {
            let suite = global[GlobalOptions.suite] ?? PreferencesLocation.defaultSuite
            let scope: PreferencesScope = global[GlobalOptions.system] ? .system : .user
            let storage = try PreferencesLocation.storage(
                suite: suite, scope: scope, environment: environment)
            if scope == .system && command.name != PathCommand.name {
                try PreferencesLocation.checkSystemDirectory(
                    suite: suite, environment: environment)
            }
            return storage
        }
        guard global[GlobalOptions.suite] == nil else {
            throw CommandFailure.usage("use either --file or --suite, not both", usage: command)
        }
        guard !global[GlobalOptions.system] else {
            throw CommandFailure.usage("use either --file or --system, not both", usage: command)
        }
        guard !file.isEmpty else {
            throw CommandFailure.usage("--file needs a path", usage: command)
        }
        let base = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return FileStorage(
            fileURL: URL(fileURLWithPath: file, relativeTo: base).standardizedFileURL)
    }

    /// The etcd endpoints as given, when they select a store in etcd:
    /// `--etcd`, else a non-empty `$PREFS_ETCD_ENDPOINTS` without `--file`
    /// or `--system`.
    static func etcdEndpoints(
        _ global: ParsedOptions<GlobalOptions>, _ environment: [String: String]
    ) -> String? {
        if let given = global[GlobalOptions.etcd] { return given }
        guard global[GlobalOptions.file] == nil, !global[GlobalOptions.system],
            let endpoints = environment["PREFS_ETCD_ENDPOINTS"], !endpoints.isEmpty
        else { return nil }
        return endpoints
    }

    /// The etcd cluster and key when `--etcd` (or `$PREFS_ETCD_ENDPOINTS`
    /// without `--file`) selects one: `--key`, else `/prefs/` and the suite.
    private static func etcd(
        _ global: ParsedOptions<GlobalOptions>, _ environment: [String: String],
        _ tls: EtcdConfiguration.TLS?, _ command: any PrefsCommand.Type
    ) throws -> (configuration: EtcdConfiguration, key: String)? {
        guard let endpoints = etcdEndpoints(global, environment) else {
            if global[GlobalOptions.key] != nil {
                throw CommandFailure.usage("--key needs --etcd ENDPOINTS", usage: command)
            }
            return nil
        }
        if global[GlobalOptions.file] != nil {
            throw CommandFailure.usage("use either --file or --etcd, not both", usage: command)
        }
        if global[GlobalOptions.system] {
            throw CommandFailure.usage("use either --system or --etcd, not both", usage: command)
        }
        if global[GlobalOptions.key] != nil && global[GlobalOptions.suite] != nil {
            throw CommandFailure.usage("use either --key or --suite, not both", usage: command)
        }
        let configuration: EtcdConfiguration
        do {
            configuration = try EtcdConfiguration(
                endpoints: endpoints,
                credentials: EtcdCredentials.fromEnvironment(
                    environment, passwordFile: global[GlobalOptions.etcdPasswordFile]), tls: tls)
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
