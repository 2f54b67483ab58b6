import Dispatch
import Preferences
import Synchronization

/// What the manifests published beside a store declare, as the provider
/// last read them.
struct Declarations: Sendable {
    /// The keys any program's manifest declares secret, with those given to
    /// the provider.
    var secrets: Set<String>
    /// Every program's manifest, by program (one that does not parse is left out).
    var manifests: [String: PreferencesManifest]
}

/// The provider's own reading of what the store's document does not carry:
/// the published manifests (which keys are secret, which types are
/// declared) and the registered replicas.
///
/// Every read runs on a dispatch thread and is awaited, so no caller's
/// thread, and no thread of Swift's cooperative pool, waits on a backend (a
/// manifest read on etcd is a network call with retries). Reads may
/// overlap (a `fetchValue` does not wait behind a slow background read);
/// the latest started that completes is kept.
final class ProviderFollower: Sendable {
    let storage: any PreferencesStorage
    let givenSecrets: Set<String>
    private struct State {
        var declarations: Declarations
        /// The number of the last read started, and of the one kept.
        var started = 0
        var kept = 0
    }
    private let state: Mutex<State>

    init(storage: any PreferencesStorage, givenSecrets: Set<String>) {
        self.storage = storage
        self.givenSecrets = givenSecrets
        self.state = Mutex(State(declarations: Declarations(secrets: givenSecrets, manifests: [:])))
    }

    /// The declarations as last read, from memory.
    var current: Declarations { state.withLock { $0.declarations } }

    /// Whether the manifests (or the provider's creator) declare `name` secret.
    func declaresSecret(_ name: String) -> Bool {
        state.withLock { $0.declarations.secrets.contains(name) }
    }

    /// Reads the manifests again, off the caller's thread, and keeps what
    /// they declare; keeps what was known when they cannot be read. Returns
    /// the declarations now, and how many replicas are registered (nil when
    /// the backend keeps no registrations or they cannot be listed).
    @discardableResult
    func refresh() async -> (declarations: Declarations, replicas: Int?) {
        let storage = self.storage
        let given = givenSecrets
        let ticket = state.withLock { state -> Int in
            state.started += 1
            return state.started
        }
        let (read, replicas) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(Declarations?, Int?), Never>) in
            DispatchQueue.global(qos: .utility).async {
                let read = Self.readDeclarations(of: storage, given: given)
                let replicas = try? storage.replicas?.list().count
                continuation.resume(returning: (read, replicas))
            }
        }
        let now = state.withLock { state -> Declarations in
            if let read, ticket > state.kept {
                state.declarations = read
                state.kept = ticket
            }
            return state.declarations
        }
        return (now, replicas)
    }

    /// The manifests published beside the store, or nil when they cannot
    /// be read. Blocks on the backend.
    private static func readDeclarations(of storage: any PreferencesStorage, given: Set<String>)
        -> Declarations?
    {
        guard let published = storage.manifests else {
            return Declarations(secrets: given, manifests: [:])
        }
        guard let programs = try? published.programManifests() else { return nil }
        var result = Declarations(secrets: given, manifests: [:])
        for (program, bytes) in programs {
            guard
                let manifest = try? PreferencesManifest(
                    jsonText: String(decoding: bytes, as: UTF8.self), source: program)
            else { continue }
            result.manifests[program] = manifest
            for (key, entry) in manifest.entries where entry.secret {
                result.secrets.insert(key)
            }
        }
        return result
    }
}
