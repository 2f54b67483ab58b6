import Logging
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a provider does in the background while it lives: reads the
/// manifests and the registered replicas again when the store changes and
/// every refresh interval, samples the store's activity for the gauges,
/// logs the store's problems as they appear and clear, and logs at debug
/// level the changes that other programs make.
struct ProviderFollowing: Sendable {
    let store: PreferencesStore
    let follower: ProviderFollower
    let logger: Logger
    let metrics: ProviderMetrics
    let refreshInterval: Duration
    /// The store's last change when the provider was made.
    let startSequence: Int64

    /// Runs until the task running it is cancelled, or the store's change
    /// feed ends.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await Task.sleep(for: refreshInterval)) != nil {
                    await refresh()
                }
            }
            group.addTask { await followProblems() }
            if logger.logLevel <= .debug {
                group.addTask { await followOtherPrograms() }
            }
            // The current state first: the first read of the manifests.
            for await _ in store.changes() { await refresh() }
            // Nothing more will change: the rest ends too.
            group.cancelAll()
        }
    }

    private func refresh() async {
        let (_, replicas) = await follower.refresh()
        metrics.sample(store.activity)
        if let replicas { metrics.replicas.record(replicas) }
    }

    /// A redaction of every secret's value now.
    private func redaction() -> SecretRedaction {
        let secrets = store.secretKeys.union(follower.current.secrets)
        return SecretRedaction(secrets: secrets, read: store.storedValue(forKey:))
    }

    // MARK: Problems

    /// Logs each problem once when it appears (a warning) and once when it
    /// clears (info), and counts those that appear.
    private func followProblems() async {
        var known: Set<PreferencesProblem> = []
        for await problems in store.problemChanges() {
            let current = Set(problems)
            let redaction = redaction()
            for problem in problems where !known.contains(problem) {
                metrics.problems.increment()
                let message = describe(problem, redaction)
                logger.warning(
                    "\(message)", metadata: metadata(of: problem, message, state: "appeared"))
            }
            for problem in known.subtracting(current).sorted(by: { $0.message < $1.message }) {
                let message = describe(problem, redaction)
                logger.info(
                    "cleared: \(message)",
                    metadata: metadata(of: problem, message, state: "cleared"))
            }
            known = current
        }
    }

    /// The problem's message with no secret in it. One about a secret key
    /// may quote the value, even cut short, so its message is withheld.
    private func describe(_ problem: PreferencesProblem, _ redaction: SecretRedaction) -> String {
        if let key = problem.key, store.isSecret(key) || follower.declaresSecret(key) {
            return "a problem with the secret key '\(key)' (its message may quote the value)"
        }
        return redaction.scrub(problem.message)
    }

    private func metadata(of problem: PreferencesProblem, _ message: String, state: String)
        -> Logger.Metadata
    {
        var metadata: Logger.Metadata = [
            "preferences.problem": .string(state),
            "preferences.error": .string(message),
        ]
        if let key = problem.key { metadata["preferences.key"] = .string(key) }
        return metadata
    }

    // MARK: Other programs' changes

    /// Logs, at debug level, each committed change that another program
    /// made: who, from where, and which keys, with the values of those
    /// that are not secret.
    private func followOtherPrograms() async {
        let me = ProgramIdentity.current
        for await event in store.changes(since: startSequence) {
            switch event {
            case .change(let entry):
                guard !me.made(entry) else { continue }
                log(entry)
            case .gap(let after, let resumesAt):
                logger.debug(
                    "changes #\(after + 1) to #\(resumesAt - 1) are not in the history kept",
                    metadata: ["preferences.sequence": .stringConvertible(resumesAt - 1)])
            }
        }
    }

    private func log(_ entry: HistoryEntry) {
        let redaction = redaction()
        var described: [String] = []
        for key in entry.keys {
            guard let change = entry.changes[key] else { continue }
            if change.secret || store.isSecret(key) || follower.declaresSecret(key) {
                described.append("\(key) \(SecretRedaction.placeholder)")
            } else {
                let old =
                    change.old?.jsonText ?? (change.oldSize.map { "(\($0) bytes)" } ?? "unset")
                let new =
                    change.new?.jsonText ?? (change.newSize.map { "(\($0) bytes)" } ?? "unset")
                described.append(redaction.scrub("\(key) \(old) → \(new)"))
            }
        }
        var metadata: Logger.Metadata = [
            "preferences.sequence": .stringConvertible(entry.sequence),
            "preferences.user": .string(entry.user),
            "preferences.program": .string(entry.program),
            "preferences.host": .string(entry.host),
            "preferences.keys": .array(entry.keys.map { .string($0) }),
        ]
        if let sudo = entry.sudoUser { metadata["preferences.sudoUser"] = .string(sudo) }
        if let cause = entry.cause {
            metadata["preferences.cause"] = .string(redaction.scrub(cause))
        }
        logger.debug(
            "change #\(entry.sequence) by \(entry.userDescription) via \(entry.program) on \(entry.host): \(described.joined(separator: ", "))",
            metadata: metadata)
    }
}

/// This program as the history records it: a change recorded with the
/// same program name on the same host counts as this process's own (or of
/// another instance of it on this host, which the history does not tell
/// apart), and is not logged as another program's.
struct ProgramIdentity: Sendable, Equatable {
    var program: String
    var host: String

    /// This process: its name, as the store records it, and its host name.
    static let current: ProgramIdentity = {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(
                decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : ""
        return ProgramIdentity(program: ProcessInfo.processInfo.processName, host: host)
    }()

    func made(_ entry: HistoryEntry) -> Bool {
        entry.program == program && entry.host == host
    }
}
