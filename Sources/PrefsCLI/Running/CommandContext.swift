import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a command on a store runs with: the resolved store (a file, or a
/// key in etcd), the key manifest in force, and the output.
struct CommandContext: RunContext {
    /// The command, for the synopsis in usage errors.
    let command: any PrefsCommand.Type
    /// The store: a file, or a key in etcd.
    let target: StoreTarget
    /// The key manifest: `--manifest`, else `$PREFS_MANIFEST`, else the one
    /// the store published (7.6 in
    /// Sources/Preferences/Preferences.docc/CommandLineTool.md), else none.
    let manifest: PreferencesManifest?
    /// The secret keys and how their values are shown (`--reveal`); its
    /// scrubbing applies to ``output``'s standard error.
    let secrets: SecretRedaction
    /// Every program's manifest published beside the store, by program
    /// (F1 in Sources/Preferences/Preferences.docc/RollingOutAChange.md):
    /// a value any of them refuses is refused.
    let programManifests: [String: PreferencesManifest]
    let output: ToolOutput
    let stopSignal: @Sendable () -> AsyncStream<Void>

    init(invocation: Invocation, tool: PrefsTool) throws {
        guard let command = invocation.command else {
            throw CommandFailure.usage("missing command", usage: nil)
        }
        let global = invocation.global
        self.command = command
        self.stopSignal = tool.stopSignal
        let target = try StoreTarget(
            global, environment: tool.environment, tls: tool.https.tls, command: command)
        self.target = target
        let named = (global[GlobalOptions.manifest] ?? tool.environment["PREFS_MANIFEST"])
            .flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        // Each read once: the manifest in force, and the secrets they declare.
        let given = Result { try named.map(PreferencesManifest.load(from:)) }
        let published = Result { try target.publishedManifest() }
        manifest = command.readsManifest ? try given.get() ?? published.get() : nil
        programManifests = command.readsManifest ? try target.programManifests() : [:]
        // A key any manifest declares secret is secret to every command; one
        // that cannot be read declares none here (the commands that use it
        // report why), and the store's document adds those it lists.
        let declaring =
            [try? given.get(), try? published.get()].compactMap { $0 } + programManifests.values
        let secrets = SecretRedaction(
            keys: Set(declaring.flatMap { $0.entries.filter(\.value.secret).keys }),
            reveal: global[GlobalOptions.reveal])
        self.secrets = secrets
        var output = tool.output
        let standardError = output.standardError
        output.standardError = { standardError(secrets.scrub($0)) }
        self.output = output
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

    /// Opens the store (``StoreTarget/openStore()``). Its writes keep the
    /// secret keys' values out of the history, and ``secrets`` learns the
    /// keys its document lists and their values.
    func openStore() async throws -> PreferencesStore {
        let store = try await target.openStore()
        store.treatAsSecret(secrets.keys)
        secrets.learn(store.snapshot)
        return store
    }

    /// `failure` with the secret values it quotes scrubbed. When it failed
    /// before the store was read (a value `set` refused), the store is
    /// read first if it exists, for the secret keys its document lists.
    func scrubbed(_ failure: CommandFailure) async -> CommandFailure {
        if secrets.needsStore, target.exists {
            _ = try? await openStore()
        }
        return CommandFailure(failure.status, secrets.scrub(failure.message))
    }
}
