import Dispatch
import Foundation
import Preferences

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One streaming `POST /v3/watch` on a store's key (E3).
///
/// The gateway answers with a chunked body of one JSON object per line:
/// `created` first, then `events`, possibly `canceled` (with
/// `compact_revision` when the start revision was compacted away). The
/// stream has its own `URLSession` (so a long-lived watch never takes a
/// connection from ordinary requests), with an idle timeout of a day: a
/// quiet key is not a dead connection.
///
/// All of its state lives on one serial queue, which is also the session's
/// delegate queue. Each (re)connection first reads the key and reports it,
/// then watches from the read's revision + 1.
final class EtcdWatchStream: NSObject, URLSessionDataDelegate, StorageWatch, @unchecked Sendable {
    private let storage: EtcdStorage
    private let onEvent: @Sendable (StorageWatchEvent) -> Void
    private let queue = DispatchQueue(label: "preferences.etcd.watch")
    private let cancelled = Protected(false)
    // The rest is touched only on `queue`.
    private var session: URLSession?
    private var task: URLSessionDataTask?
    private var buffer = Data()
    private var live = false
    private var failures = 0
    private var reportedInterruption = false

    init(storage: EtcdStorage, onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) {
        self.storage = storage
        self.onEvent = onEvent
        super.init()
    }

    func start() {
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.underlyingQueue = queue
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 86_400
        configuration.timeoutIntervalForResource = 86_400 * 365
        configuration.urlCache = nil
        queue.async {
            self.session = URLSession(
                configuration: configuration, delegate: self, delegateQueue: delegateQueue)
            self.connect()
        }
    }

    func cancel() {
        cancelled.withLock { $0 = true }
        queue.async {
            self.endStream()
            // The session holds its delegate (this object) until invalidated.
            self.session?.invalidateAndCancel()
            self.session = nil
        }
    }

    private var isCancelled: Bool { cancelled.withLock { $0 } }

    // MARK: Connecting (on `queue`)

    private func connect() {
        guard !isCancelled, let session else { return }
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
        var request = URLRequest(
            url: storage.client.currentEndpoint.appendingPathComponent("/v3/watch"))
        request.httpMethod = "POST"
        request.httpBody = try? JSONSerialization.data(withJSONObject: body)
        request.timeoutInterval = 86_400
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token = storage.client.token {
            request.setValue(token, forHTTPHeaderField: "Authorization")
        }
        buffer = Data()
        let task = session.dataTask(with: request)
        self.task = task
        task.resume()
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
        task?.cancel()
        task = nil
        if live {
            live = false
            storage.watchBecameLive(false)
        }
    }

    // MARK: The stream (on `queue`, as the session's delegate)

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard dataTask === task else { return }
        buffer.append(data)
        while let newline = buffer.firstIndex(of: 0x0A) {
            let line = buffer[buffer.startIndex..<newline]
            buffer.removeSubrange(buffer.startIndex...newline)
            guard dataTask === task else { return }
            handle(line)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
    ) {
        guard task === self.task else { return }
        endStream()
        retryLater()
    }

    private func handle(_ line: Data) {
        guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else {
            return
        }
        if let error = object["error"] {
            // An error ends the watch (an expired token, say): sign in and start again.
            let message = (error as? [String: Any]).flatMap { EtcdClient.errorMessage($0) } ?? ""
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
