import Dispatch
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

/// One streaming `POST /v3/watch` on a store's key (E3, <doc:EtcdGuarantees>).
///
/// The gateway answers with a chunked body of one JSON object per line:
/// `created` first, then `events`, possibly `canceled` (with
/// `compact_revision` when the start revision was compacted away). The
/// stream has a connection of its own, never one that requests use.
///
/// - **Start.** The first connection reads the key and reports it, then
///   watches from the read's revision + 1, so nothing between the two is
///   missed.
/// - **Resume.** When the connection drops (a member killed, a network
///   fault), the watch resumes from the revision after the last one it saw,
///   on the endpoint that answered most recently, so the changes made
///   meanwhile arrive in order, with no read.
/// - **Compaction.** When that revision is already compacted away, etcd
///   cancels the watch with `compact_revision`: the watch reads the key
///   again (reporting the current document) and watches from there. The
///   changes in between are gone from etcd; the final state never is.
///   A cancel for any other reason, and an error line (an expired token),
///   also lead to a fresh read.
/// - **Health.** While the stream is quiet, every
///   ``EtcdConfiguration/watchCheckInterval`` the watch asks its member for
///   its status; a member that does not answer, or knows no leader, is
///   left for the next endpoint, and the watch resumes there. A new stream
///   that is not created within ``EtcdClient/attemptTimeout`` is left the
///   same way; that wait doubles with each failure in a row, up to eight
///   times, so a watch that is merely slow to create still goes live.
/// - **Keeping up.** A member can answer its status, know a leader, and
///   still send its watch nothing (<doc:EtcdGuarantees>). So the same quiet
///   check also reads the key's revision from the cluster (a linearizable
///   read): when the key holds a change the watch has not delivered, and
///   it still has not half an interval later, the watch is left for the
///   next endpoint and resumes there from its last revision. If it falls
///   behind again before it catches up, it reports `.interrupted` saying
///   so; the change that catches it up reports `.changed`.
/// - **Interruption.** When no endpoint has taken the watch for
///   ``EtcdConfiguration/timeout``, it reports `.interrupted` once (naming
///   every endpoint), keeps trying with a growing pause (up to 1 s), and
///   reports `.changed` once it is back. The report comes at that timeout
///   even while an endpoint is still being waited for.
///
/// All of its state lives on one serial queue.
final class EtcdWatchStream: StorageWatch, @unchecked Sendable {
    private let storage: EtcdStorage
    /// The caller's handler: nothing reaches it once ``cancel()`` has returned.
    private let onEvent: CancellableHandler<StorageWatchEvent>
    /// Where the stream's work runs, one piece at a time (internal so that
    /// a test can wait for the work queued so far with `queue.sync {}`).
    let queue = DispatchQueue(label: "preferences.etcd.watch")
    /// Health checks block; they run here, never on `queue`.
    private let checkQueue = DispatchQueue(label: "preferences.etcd.watch-check")
    // The rest is touched only on `queue`.
    private var stream: (any EtcdLineStream)?
    /// The endpoint the current stream is on.
    private var endpoint: URL?
    /// Tells the current stream's callbacks from late ones of an ended stream.
    private var generation = 0
    private var live = false
    /// Whether the current stream has shown that it follows the cluster: an
    /// event came, or a check found its member with a leader and the key
    /// not ahead of it. A stream merely created has not: a member cut off
    /// from its peers still creates watches.
    private var proven = false
    private var failures = 0
    private var reportedInterruption = false
    /// The revision to resume from (the one after the last seen); nil when
    /// the next connection must read the key first.
    private var resumeRevision: Int64?
    /// The last document reported, to report again after an interruption.
    private var lastReported: StoredContents?
    /// When the watch last lost its stream without getting it back, and
    /// what each endpoint said since.
    private var downSince: DispatchTime?
    private var lastSaid: [String?]
    /// When the current stream last sent a line.
    private var lastLine = DispatchTime.now()
    /// The current stream's periodic check, while it is live.
    private var checkTimer: (any DispatchSourceTimer)?
    /// Whether a check is waiting for its answers (on `checkQueue`).
    private var checking = false
    /// A change of the key that the cluster holds and the watch had not
    /// delivered when a check saw it; nil while the watch keeps up.
    private var lag: Lag?
    /// The last steps the watch took (connections, losses, events), newest
    /// last, for diagnosing a watch that fell silent.
    private var history: [(seconds: Double, step: String)] = []
    /// Where the next step goes once `history` holds 200 (the oldest's place).
    private var historyNext = 0
    private let started = DispatchTime.now()

    init(storage: EtcdStorage, onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) {
        self.storage = storage
        self.onEvent = CancellableHandler(onEvent)
        lastSaid = Array(repeating: nil, count: storage.configuration.endpoints.count)
    }

    func start() {
        storage.watchStarted(true)
        queue.async { self.connect() }
    }

    func cancel() {
        guard onEvent.cancel() else { return }
        storage.watchStarted(false)
        queue.async { self.endStream() }
    }

    private var isCancelled: Bool { onEvent.isCancelled }

    /// The longest a watch that stopped following the cluster takes to
    /// resume on another endpoint or report `.interrupted`: two check
    /// intervals to find its stream quiet and the key ahead, half of one to
    /// confirm, and the timeout, twice, for the cluster's answer and for
    /// the move.
    static func reactionBound(_ configuration: EtcdConfiguration) -> TimeInterval {
        2.5 * configuration.watchCheckInterval + 2 * configuration.timeout
    }

    /// The watch's last steps, oldest first, each with the seconds since it
    /// started: what a test prints when a watch it relies on fell silent.
    func recentHistory() -> [String] {
        let (steps, next) = queue.sync { (history, historyNext) }
        return (steps[next...] + steps[..<next]).map {
            String(cFormat: "%.3f ", $0.seconds) + $0.step
        }
    }

    /// Records a step (on `queue`); the last 200 are kept.
    private func note(_ step: @autoclosure () -> String) {
        let entry = (EtcdClient.seconds(from: started, to: .now()), step())
        if history.count < 200 {
            history.append(entry)
        } else {
            history[historyNext] = entry
            historyNext = (historyNext + 1) % 200
        }
    }

    // MARK: Connecting (on `queue`)

    private func connect() {
        guard !isCancelled else { return }
        let start: Int64
        if let resumeRevision {
            start = resumeRevision
        } else {
            do {
                let (contents, header) = try storage.readWithHeader()
                start = header + 1
                resumeRevision = start
                report(contents)
            } catch let error as PreferencesError {
                note("read failed: \(error)")
                reportInterruption(error)
                retryLater()
                return
            } catch {
                note("read failed: \(error)")
                retryLater()
                return
            }
        }
        guard !isCancelled else { return }
        let body: PreferenceValue = [
            "create_request": [
                "key": EtcdClient.base64(storage.key), "start_revision": .string(String(start)),
            ]
        ]
        let payload = Data(body.jsonText.utf8)
        generation += 1
        let current = generation
        let client = storage.client
        let endpoint = client.watchEndpoint()
        self.endpoint = endpoint
        lastLine = .now()
        note("connecting to \(endpoint.absoluteString) from revision \(start)")
        stream = client.transport(for: endpoint).openStream(
            "/v3/watch", payload, to: endpoint, token: client.token,
            connectTimeout: client.attemptTimeout,
            onLine: { line in
                self.queue.async {
                    if current == self.generation { self.handle(line) }
                }
            },
            onEnd: { reason in
                self.queue.async {
                    guard current == self.generation else { return }
                    self.lost(endpoint, reason)
                }
            })
        // A member that takes the connection and never answers (stopped, or
        // an https stream, which has no connect deadline of its own). The
        // wait doubles with each failure in a row (up to 8 attempts' time),
        // so a slow network or a busy machine, where creating a watch takes
        // longer than one attempt, still gets a live watch in the end.
        let creationWait = client.attemptTimeout * Double(1 << min(failures, 3))
        queue.asyncAfter(deadline: .now() + creationWait) {
            guard current == self.generation, !self.live else { return }
            self.lost(endpoint, "the watch was not created in time")
        }
    }

    /// The stream on `endpoint` ended or its member failed a health check:
    /// resume elsewhere, and report the watch interrupted once no endpoint
    /// has taken it for the configured timeout.
    private func lost(_ endpoint: URL, _ reason: String) {
        let wasLive = live
        let wasProven = proven
        note("lost \(endpoint.absoluteString)\(wasLive ? " (live)" : ""): \(reason)")
        endStream()
        storage.client.noteFailure(of: endpoint)
        if let index = storage.configuration.endpoints.firstIndex(of: endpoint) {
            lastSaid[index] = reason
        }
        // Refused before it started (not a network fault): read first next
        // time, which signs in again and finds a reason to report.
        if !wasLive && reason.hasPrefix("HTTP status") { resumeRevision = nil }
        let now = DispatchTime.now()
        if wasProven || downSince == nil {
            downSince = now
            // Reported at the timeout even while an attempt is still waited
            // for, or a stream taken by a member that has not proven itself.
            queue.asyncAfter(deadline: now + storage.configuration.timeout) {
                guard self.downSince == now, !self.isCancelled else { return }
                self.reportUnreachable()
            }
        }
        if let downSince,
            EtcdClient.seconds(from: downSince, to: now) >= storage.configuration.timeout
        {
            reportUnreachable()
        }
        retryLater()
    }

    private func reportUnreachable() {
        reportInterruption(storage.client.unreachable(operation: "watch", lastSaid: lastSaid))
    }

    private func reportInterruption(_ error: PreferencesError) {
        guard !reportedInterruption else { return }
        note("interrupted: \(error)")
        reportedInterruption = true
        deliver(.interrupted(error))
    }

    private func report(_ contents: StoredContents) {
        reportedInterruption = false
        lastReported = contents
        if let lag, !isBehind(lag.revision) { self.lag = nil }
        deliver(.changed(contents))
    }

    /// Hands `event` to `onEvent` unless the watch has been cancelled; a
    /// ``cancel()`` meanwhile waits until it has been handed over.
    private func deliver(_ event: StorageWatchEvent) {
        onEvent.deliver(event)
    }

    /// Reconnects after a pause that grows with each failure in a row (50 ms to 1 s).
    private func retryLater() {
        guard !isCancelled else { return }
        failures += 1
        let pause = min(0.05 * Double(1 << min(failures - 1, 5)), 1.0)
        queue.asyncAfter(deadline: .now() + pause) { self.connect() }
    }

    /// Ends the current stream, if any.
    private func endStream() {
        generation += 1
        stream?.cancel()
        stream = nil
        checkTimer?.cancel()
        checkTimer = nil
        checking = false
        proven = false
        if live {
            live = false
            storage.watchBecameLive(false)
        }
    }

    // MARK: Health (on `queue`, the check itself on `checkQueue`)

    /// Checks the current stream every ``EtcdConfiguration/watchCheckInterval``
    /// while it is live.
    private func startChecks() {
        checkTimer?.cancel()
        checkTimer = nil
        let interval = storage.configuration.watchCheckInterval
        guard interval > 0 else { return }
        let current = generation
        let timer = queue.repeatingTimer(every: .nanoseconds(Int(interval * 1e9))) {
            self.check(current)
        }
        checkTimer = timer
        timer.resume()
    }

    /// One check of a quiet stream: does its member answer and know a
    /// leader, and has the watch delivered every change the cluster holds?
    private func check(_ current: Int, quiet: Bool = true) {
        let interval = storage.configuration.watchCheckInterval
        guard current == generation, live, !checking, !isCancelled, let endpoint else { return }
        // Lines arrived lately: the member is evidently there.
        if quiet && EtcdClient.seconds(from: lastLine, to: .now()) < interval { return }
        checking = true
        checkQueue.async {
            let problem = self.storage.client.checkHealth(of: endpoint)
            let cluster = problem == nil ? self.readKeyState() : nil
            self.queue.async {
                guard current == self.generation else { return }
                self.checking = false
                if let problem {
                    self.lost(endpoint, problem)
                } else {
                    self.compare(with: cluster, current)
                }
            }
        }
    }

    /// The key as the cluster holds it now: its `mod_revision`, 0 when it
    /// does not exist; nil when the cluster did not answer (the watch's
    /// member answered its status, so that is no reason to leave it).
    private func readKeyState() -> Int64? {
        let reply = try? storage.client.call(
            "/v3/kv/range", ["key": EtcdClient.base64(storage.key), "keys_only": true],
            operation: "watch", idempotent: true)
        guard let reply else { return nil }
        return EtcdClient.int64(reply["kvs"]?.arrayValue?.first?["mod_revision"])
    }

    /// A change the cluster holds and the watch has not delivered.
    private struct Lag {
        /// The key's `mod_revision` the cluster reported (0: deleted).
        let revision: Int64
        /// Whether the watch was already left for another endpoint over it.
        var moved = false
    }

    /// Whether the cluster's state of the key (its `mod_revision`, 0 for
    /// none) is ahead of what the watch has delivered.
    private func isBehind(_ cluster: Int64) -> Bool {
        guard let resumeRevision else { return false }
        if cluster == 0 { return lastReported?.bytes != nil }
        return cluster >= resumeRevision
    }

    /// Acts on a check's reading of the cluster: a lag is confirmed half an
    /// interval later (a member applies a change a little after the leader
    /// answers), then the watch moves; when it lags again after moving, it
    /// reports that it is not following the cluster.
    private func compare(with cluster: Int64?, _ current: Int) {
        guard let cluster, isBehind(cluster) else {
            if cluster != nil {
                lag = nil
                followed()
            }
            return
        }
        note(
            "check: the cluster has the key at revision \(cluster), the watch resumes from \(resumeRevision ?? 0)"
        )
        if lag == nil { lag = Lag(revision: cluster) }
        let interval = storage.configuration.watchCheckInterval
        queue.asyncAfter(deadline: .now() + interval / 2) {
            guard current == self.generation, self.live, let endpoint = self.endpoint,
                var lag = self.lag, self.isBehind(lag.revision)
            else { return }
            let message =
                "the watch at \(endpoint.absoluteString) fell silent: the key is at revision \(lag.revision), the watch delivered up to \((self.resumeRevision ?? 1) - 1)"
            if lag.moved {
                self.reportInterruption(
                    PreferencesError.io(
                        operation: "watch", path: self.storage.key, code: ETIMEDOUT,
                        message: message + ", also after moving to another endpoint"))
            }
            lag.moved = true
            self.lag = lag
            self.lost(endpoint, message)
        }
    }

    // MARK: The stream's lines (on `queue`)

    private func handle(_ line: Data) {
        lastLine = .now()
        guard let object = EtcdClient.jsonObject(line) else { return }
        if let error = object["error"] {
            // An error ends the watch (an expired token, say): sign in and start again.
            let message = EtcdClient.errorMessage(error) ?? error.stringValue ?? ""
            note("error line: \(message)")
            if EtcdClient.classify(message, status: 0) == .invalidToken {
                storage.client.invalidateToken()
            }
            restart()
            return
        }
        if let problem = EtcdReplyShape.watchLine.problem(with: object, at: ""), let endpoint {
            lost(endpoint, "malformed answer: \(problem)")
            return
        }
        guard let result = object["result"] else { return }
        if result["created"] == true && !live {
            note("created")
            live = true
            failures = 0
            if let endpoint { storage.client.noteAnswer(from: endpoint) }
            storage.watchBecameLive(true, on: endpoint)
            startChecks()
            // Back after losing its stream: checked at once, not a quiet
            // interval later, so that a healthy member ends the outage.
            if downSince != nil { check(generation, quiet: false) }
        }
        for event in result["events"]?.arrayValue ?? [] {
            guard let kv = event["kv"], EtcdClient.bytes(kv["key"]) == Array(storage.key.utf8)
            else { continue }
            let modRevision = EtcdClient.int64(kv["mod_revision"])
            let contents: StoredContents
            if event["type"] == "DELETE" {
                contents = StoredContents(bytes: nil, revision: .absent)
            } else {
                contents = StoredContents(
                    bytes: EtcdClient.bytes(kv["value"]),
                    revision: StorageRevision(String(modRevision)))
            }
            storage.learn(contents.revision, at: modRevision)
            resumeRevision = max(resumeRevision ?? 0, modRevision + 1)
            report(contents)
        }
        if let events = result["events"]?.arrayValue, !events.isEmpty {
            note("\(events.count) events up to revision \((resumeRevision ?? 0) - 1)")
            followed()
        }
        if result["canceled"] == true {
            note("canceled, compact revision \(EtcdClient.int64(result["compact_revision"]))")
            // Compacted past our start, or cancelled by the server: read and watch again.
            if EtcdClient.int64(result["compact_revision"]) != 0 {
                storage.watchMetCompaction()
            }
            restart()
        }
    }

    /// The current stream follows the cluster: an outage is over.
    private func followed() {
        guard !proven else { return }
        proven = true
        downSince = nil
        lastSaid = lastSaid.map { _ in nil }
        // Back after an interruption: say so, with what was last known; a
        // watch that fell behind says so once it has caught up.
        if reportedInterruption, lag == nil, let lastReported { report(lastReported) }
    }

    /// Reads the key again and watches from there.
    private func restart() {
        endStream()
        resumeRevision = nil
        queue.async { self.connect() }
    }
}
