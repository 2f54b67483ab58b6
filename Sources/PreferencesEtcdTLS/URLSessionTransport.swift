import Dispatch
import Foundation
import Preferences
import PreferencesEtcd

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `https://` endpoints through Foundation's `URLSession`, which verifies
/// the server against the system's trust store.
///
/// A request blocks its caller on a `DispatchSemaphore` while the data
/// task runs; the completion handler runs on the session's own delegate
/// queue, so nothing waits for the blocked thread. Streams have a session
/// of their own each, with an idle timeout of a day (a quiet watch is not
/// a dead connection) so they never take connections from requests.
final class URLSessionTransport: EtcdTransport {
    private let session: URLSession

    init(timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    static func request(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?, timeout: TimeInterval
    ) -> URLRequest {
        var request = URLRequest(url: endpoint.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = payload
        request.timeoutInterval = timeout
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue(token, forHTTPHeaderField: "Authorization") }
        return request
    }

    func send(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?, deadline: DispatchTime
    ) -> EtcdAnswer {
        let now = DispatchTime.now()
        let remaining =
            deadline > now ? Double(deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1e9 : 0
        guard remaining > 0 else { return .transport(message: "timed out", sent: false) }
        let request = Self.request(path, payload, to: endpoint, token: token, timeout: remaining)
        let done = DispatchSemaphore(value: 0)
        let result = Locked<(Data?, URLResponse?, (any Error)?)?>(nil)
        let task = session.dataTask(with: request) { data, response, error in
            result.withLock { $0 = (data, response, error) }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: deadline + 0.5) == .timedOut {
            task.cancel()
            _ = done.wait(timeout: .now() + 2)
            return .transport(message: "timed out", sent: true)
        }
        guard let (data, response, error) = result.withLock({ $0 }) else {
            return .transport(message: "no answer", sent: true)
        }
        if let error { return Self.failure(error) }
        guard let http = response as? HTTPURLResponse else {
            return .transport(message: "not an HTTP answer", sent: true)
        }
        return .received(status: http.statusCode, body: data ?? Data())
    }

    static func failure(_ error: any Error) -> EtcdAnswer {
        let message = (error as NSError).localizedDescription
        // The request's time limit is what was left of the call's: said as
        // the other time-outs are, so that it does not hide an endpoint's
        // earlier, more telling answer (an untrusted certificate).
        if (error as NSError).domain == NSURLErrorDomain
            && (error as NSError).code == NSURLErrorTimedOut
        {
            return .transport(message: "timed out", sent: true)
        }
        if let urlError = error as? URLError {
            switch urlError.code {
            case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
                .secureConnectionFailed, .serverCertificateUntrusted,
                .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .clientCertificateRejected, .badURL,
                .unsupportedURL:
                return .transport(message: message, sent: false)
            default:
                break
            }
        }
        return .transport(message: message, sent: true)
    }

    func openStream(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?,
        connectTimeout: TimeInterval, onLine: @escaping @Sendable (Data) -> Void,
        onEnd: @escaping @Sendable (String) -> Void
    ) -> any EtcdLineStream {
        let stream = URLSessionLineStream(onLine: onLine, onEnd: onEnd)
        stream.start(Self.request(path, payload, to: endpoint, token: token, timeout: 86_400))
        return stream
    }
}

/// One streaming request with its own session, whose delegate this is.
final class URLSessionLineStream: NSObject, URLSessionDataDelegate, EtcdLineStream,
    @unchecked Sendable
{
    private let onLine: @Sendable (Data) -> Void
    private let onEnd: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "preferences.etcd.https-stream")
    // Touched only on `queue` (the session's delegate queue).
    private var session: URLSession?
    private var splitter = LineSplitter()
    private var ended = false

    init(onLine: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable (String) -> Void) {
        self.onLine = onLine
        self.onEnd = onEnd
    }

    func start(_ request: URLRequest) {
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.underlyingQueue = queue
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 86_400
        configuration.timeoutIntervalForResource = 86_400 * 365
        configuration.urlCache = nil
        queue.async {
            let session = URLSession(
                configuration: configuration, delegate: self, delegateQueue: delegateQueue)
            self.session = session
            session.dataTask(with: request).resume()
        }
    }

    func cancel() {
        queue.async {
            self.ended = true
            // The session holds its delegate (this object) until invalidated.
            self.session?.invalidateAndCancel()
            self.session = nil
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !ended else { return }
        splitter.append(data, onLine)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
    ) {
        guard !ended else { return }
        ended = true
        onEnd(error.map { ($0 as NSError).localizedDescription } ?? "the watch stream ended")
        self.session?.finishTasksAndInvalidate()
        self.session = nil
    }
}
