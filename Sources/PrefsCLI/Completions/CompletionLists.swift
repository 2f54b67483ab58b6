import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The suite names and keys the completion scripts offer, which `prefs
/// completions --list` prints when Tab is pressed.
///
/// Nothing here fails: a directory, store or manifest that cannot be read
/// gives an empty list, since an error would land in the middle of the
/// user's command line.
enum CompletionLists {
    /// How long the keys may take: a store in an unreachable etcd cluster
    /// would otherwise hold the shell for the client's whole timeout.
    static let keysDeadline: Duration = .seconds(2)

    /// The suites in the default store directory (`$PREFS_HOME`, else
    /// `$XDG_CONFIG_HOME/prefs`, else the platform's): each `NAME.json`
    /// there with a valid suite name, but not the manifests stores publish
    /// beside them (`NAME.keys.json`) nor corrupt files set aside
    /// (`NAME.json.corrupt-…`, which do not end in `.json`).
    static func suites(environment: [String: String]) -> [String] {
        let directory = PreferencesLocation.directory(environment: environment)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let suites = names.compactMap { name -> String? in
            guard name.hasSuffix(".json"), !name.hasSuffix(".keys.json") else { return nil }
            let suite = String(name.dropLast(".json".count))
            guard (try? PreferencesLocation.validate(suite: suite)) != nil else { return nil }
            guard isRegularFile(directory.appendingPathComponent(name).path) else { return nil }
            return suite
        }
        return suites.sortedByBytes()
    }

    /// The keys of the manifest in force and the stored keys, found as
    /// commands find them (`--file`, `--suite`, `--etcd`, `--manifest`,
    /// `$PREFS_MANIFEST`, the manifest published beside the store); empty
    /// when any of it cannot be read.
    static func keys(invocation: Invocation, tool: PrefsTool) async -> [String] {
        let found = await firstWithin(keysDeadline) { () async throws -> [String] in
            let context = try CommandContext(invocation: invocation, tool: tool)
            var keys = Set(try await context.openStore().snapshot.values.keys)
            if let manifest = context.manifest { keys.formUnion(manifest.entries.keys) }
            return Array(keys)
        }
        return (found ?? []).sortedByBytes()
    }

    /// What `body` returns, or nil when it throws or has not returned
    /// within `deadline` (it is then left running; the process ends soon).
    private static func firstWithin<Value: Sendable>(
        _ deadline: Duration, _ body: @escaping @Sendable () async throws -> Value
    ) async -> Value? {
        let race = FirstResult<Value?>()
        return await withCheckedContinuation { continuation in
            race.start(continuation)
            Task { race.finish(try? await body()) }
            Task {
                try? await Task.sleep(for: deadline)
                race.finish(nil)
            }
        }
    }
}

/// Resumes a continuation with the first of several results.
private final class FirstResult<Value: Sendable>: Sendable {
    private let continuation = Locked<CheckedContinuation<Value, Never>?>(nil)

    func start(_ waiting: CheckedContinuation<Value, Never>) {
        continuation.withLock { $0 = waiting }
    }

    func finish(_ value: Value) {
        let waiting = continuation.withLock { current in
            defer { current = nil }
            return current
        }
        waiting?.resume(returning: value)
    }
}
