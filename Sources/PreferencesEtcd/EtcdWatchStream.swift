import Dispatch
import Foundation
import Preferences

/// One streaming `POST /v3/watch` on a store's key (E3).
///
/// The gateway answers with a chunked body of one JSON object per line:
/// `created` first, then `events`, possibly `canceled` (with
/// `compact_revision` when the start revision was compacted away). Each
/// (re)connection first reads the key and reports it, then watches from the
/// read's revision + 1, so nothing between the two is missed. The stream
/// has a connection of its own, never one that requests use.
///
/// All of its state lives on one serial queue.
final class EtcdWatchStream: StorageWatch, @unchecked Sendable {
    private let storage: EtcdStorage
    private let onEvent: @Sendable (StorageWatchEvent) -> Void
    private let queue = DispatchQueue(label: "preferences.etcd.watch")
    private let cancelled = Protected(false)
    // The rest is touched only on `queue`.
    private var stream: (any EtcdLineStream)?
    /// Tells the current stream's callbacks from late ones of an ended stream.
    private var generation = 0
    private var live = false
    private var failures = 0
    private var reportedInterruption = false

    init(storage: EtcdStorage, onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) {
        self.storage = storage
        self.onEvent = onEvent
    }

    func start() {
        storage.watchStarted(true)
        queue.async { self.connect() }
    }

    func cancel() {
        let first = cancelled.withLock { cancelled in
            defer { cancelled = true }
            return !cancelled
        }
        guard first else { return }
        storage.watchStarted(false)
        queue.async { self.endStream() }
    }

    private var isCancelled: Bool { cancelled.withLock { $0 } }

    // MARK: Connecting (on `queue`)

    private func connect() {
        guard !isCancelled else { return }
        let start: Int64
        do {
            let (contents, header) = try storage.readWithHeader()
            start = header + 1
            reportedInterruption = false
            onEvent(.changed(contents))
        } catch let error as PreferencesError {
            if !reportedInterruption {
                reportedInterruption = true
                onEvent(.interrupted(error))
            }
            retryLater()
            return
        } catch {
            retryLater()
            return
        }
        guard !isCancelled else { return }
        let body: [String: Any] = [
            "create_request": [
                "key": EtcdClient.base64(storage.key), "start_revision": String(start),
            ]
        ]
        guard let payload = try? JSONSerialization.data(withJSONObject: body) else { return }
        generation += 1
        let current = generation
        let client = storage.client
        let endpoint = client.currentEndpoint
        stream = client.transport(for: endpoint).openStream(
            "/v3/watch", payload, to: endpoint, token: client.token,
            connectTimeout: storage.configuration.timeout,
            onLine: { line in
                self.queue.async {
                    if current == self.generation { self.handle(line) }
                }
            },
            onEnd: { _ in
                self.queue.async {
                    guard current == self.generation else { return }
                    self.endStream()
                    self.retryLater()
                }
            })
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
        if live {
            live = false
            storage.watchBecameLive(false)
        }
    }

    // MARK: The stream's lines (on `queue`)

    private func handle(_ line: Data) {
        guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else {
            return
        }
        if let error = object["error"] {
            // An error ends the watch (an expired token, say): sign in and start again.
            let message =
                (error as? [String: Any]).flatMap { EtcdClient.errorMessage($0) }
                ?? (error as? String) ?? ""
            if EtcdClient.classify(message, status: 0) == .invalidToken {
                storage.client.invalidateToken()
            }
            restart()
            return
        }
        guard let result = object["result"] as? [String: Any] else { return }
        if result["created"] as? Bool == true && !live {
            live = true
            failures = 0
            storage.watchBecameLive(true)
        }
        for case let event as [String: Any] in result["events"] as? [Any] ?? [] {
            guard let kv = event["kv"] as? [String: Any],
                EtcdClient.bytes(kv["key"]) == Array(storage.key.utf8)
            else { continue }
            let modRevision = EtcdClient.int64(kv["mod_revision"])
            let contents: StoredContents
            if event["type"] as? String == "DELETE" {
                contents = StoredContents(bytes: nil, revision: .absent)
            } else {
                contents = StoredContents(
                    bytes: EtcdClient.bytes(kv["value"]),
                    revision: StorageRevision(String(modRevision)))
            }
            storage.learn(contents.revision, at: modRevision)
            onEvent(.changed(contents))
        }
        if result["canceled"] as? Bool == true {
            // Compacted past our start, or cancelled by the server: read and watch again.
            restart()
        }
    }

    private func restart() {
        endStream()
        queue.async { self.connect() }
    }
}
