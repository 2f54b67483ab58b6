import Dispatch
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `http://` endpoints over ``HTTPConnection``: plain HTTP/1.1 on TCP,
/// with idle connections kept per endpoint and reused.
///
/// `URLSession` is not used for `http://` because swift-corelibs-foundation
/// stops the process (`fatalError("Transfer completed, but there's no
/// response.")`, swiftlang/swift-corelibs-foundation#5285) when a server
/// closes a connection after taking a request and before answering —
/// exactly what a member killed mid-request does, which the etcd backend
/// must survive (E4, <doc:EtcdGuarantees>).
package final class SocketTransport: EtcdTransport {
    package init() {}

    private let idle = Locked<[String: [PooledConnection]]>([:])

    /// A connection handed between threads, used by one at a time.
    final class PooledConnection: @unchecked Sendable {
        let connection: HTTPConnection
        init(_ connection: HTTPConnection) { self.connection = connection }
    }

    private static func address(_ endpoint: URL) -> (host: String, port: Int, key: String) {
        let host = endpoint.host ?? "localhost"
        let port = endpoint.port ?? 80
        return (host, port, "\(host):\(port)")
    }

    private static func requestPath(_ endpoint: URL, _ path: String) -> String {
        var base = endpoint.path
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    package func send(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?, deadline: DispatchTime
    ) -> EtcdAnswer {
        let (host, port, key) = Self.address(endpoint)
        let pooled = idle.withLock { $0[key]?.popLast() }
        let connection: HTTPConnection
        if let pooled {
            connection = pooled.connection
        } else {
            do {
                connection = try HTTPConnection.open(host: host, port: port, deadline: deadline)
            } catch {
                return .transport(message: error.message, sent: error.sent)
            }
        }
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", token)) }
        do {
            let head = try connection.post(
                path: Self.requestPath(endpoint, path), host: "\(host):\(port)",
                body: Array(payload), headers: headers, deadline: deadline)
            let body = try connection.body(of: head, deadline: deadline)
            if connection.reusable {
                let keep = PooledConnection(connection)
                idle.withLock { $0[key, default: []].append(keep) }
            }
            return .received(status: head.status, body: Data(body))
        } catch {
            return .transport(message: error.message, sent: error.sent)
        }
    }

    package func openStream(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?,
        connectTimeout: TimeInterval, onLine: @escaping @Sendable (Data) -> Void,
        onEnd: @escaping @Sendable (String) -> Void
    ) -> any EtcdLineStream {
        let stream = SocketLineStream()
        let (host, port, _) = Self.address(endpoint)
        let requestPath = Self.requestPath(endpoint, path)
        startThread {
            let cancelled = { stream.isCancelled }
            do {
                let connection = try HTTPConnection.open(
                    host: host, port: port, deadline: .now() + connectTimeout)
                var headers: [(String, String)] = []
                if let token { headers.append(("Authorization", token)) }
                let head = try connection.post(
                    path: requestPath, host: "\(host):\(port)", body: Array(payload),
                    headers: headers, deadline: .now() + connectTimeout, cancelled: cancelled)
                guard head.status == 200 else {
                    let body = try connection.body(of: head, deadline: .now() + connectTimeout)
                    onEnd(
                        "HTTP status \(head.status): \(String(decoding: body.prefix(200), as: UTF8.self))"
                    )
                    return
                }
                var splitter = LineSplitter()
                let forever = DispatchTime.distantFuture
                if head.isChunked {
                    while let chunk = try connection.nextChunk(
                        deadline: forever, cancelled: cancelled)
                    {
                        splitter.append(Data(chunk), onLine)
                    }
                } else {
                    splitter.append(Data(try connection.body(of: head, deadline: forever)), onLine)
                }
                if !stream.isCancelled { onEnd("the watch stream ended") }
            } catch let error as TransportFailure {
                if !stream.isCancelled { onEnd(error.message) }
            } catch {
                if !stream.isCancelled { onEnd("\(error)") }
            }
        }
        return stream
    }
}

/// The socket stream's cancellation flag; its thread notices within 250 ms.
final class SocketLineStream: EtcdLineStream {
    private let cancelled = Locked(false)
    var isCancelled: Bool { cancelled.withLock { $0 } }
    func cancel() { cancelled.withLock { $0 = true } }
}
