import Foundation
import LocalEtcd
import Preferences
import PreferencesTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server on a loopback port that answers etcd's JSON gateway calls
/// with given bodies, to show what the client makes of answers a real
/// member never sends. Each request gets one answer, status 200 with the
/// body given for its path (or a well-formed empty one: a header and
/// nothing else), and its connection is closed.
///
/// ```swift
/// let server = try CannedEtcd(["/v3/kv/range": #"{"header":{},"kvs":"not-a-list"}"#])
/// let storage = try EtcdStorage(
///     configuration: EtcdConfiguration(endpoints: [server.url]), key: "/prefs/app")
/// ```
package final class CannedEtcd: Sendable {
    /// Where clients connect.
    package let url: URL
    private let shared: Shared

    /// What the server's threads share; they hold this, not the server, so
    /// it stops when the test lets go of it.
    private final class Shared: Sendable {
        let listener: Int32
        let answers: [String: String]
        let paths = Locked<[String]>([])
        let stopped = Locked(false)

        init(listener: Int32, answers: [String: String]) {
            self.listener = listener
            self.answers = answers
        }
    }

    /// The answer to a path without one of its own: a header, nothing else.
    package static let emptyAnswer = #"{"header":{"revision":"1"}}"#

    package struct ServerError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts answering each path in `answers` with its body.
    package init(_ answers: [String: String]) throws {
        guard let listener = LoopbackPorts.bind(port: 0, reuseAddress: false) else {
            throw ServerError(description: "no loopback port to listen on")
        }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(listener, $0, &length) == 0
            }
        }
        guard named, listen(listener, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(listener)
            throw ServerError(description: "cannot listen on loopback: \(reason)")
        }
        url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        let shared = Shared(listener: listener, answers: answers)
        self.shared = shared
        Thread { Self.acceptConnections(shared) }.start()
    }

    /// The paths asked for so far, in order.
    package var paths: [String] { shared.paths.value }

    /// Stops accepting and closes every connection within 100 ms.
    package func stop() {
        shared.stopped.withLock { $0 = true }
    }

    deinit { stop() }

    // MARK: On the server's threads

    private static func acceptConnections(_ shared: Shared) {
        defer { close(shared.listener) }
        while !shared.stopped.value {
            var entry = pollfd(fd: shared.listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            let client = accept(shared.listener, nil, nil)
            guard client >= 0 else { continue }
            Thread { answer(client, shared) }.start()
        }
    }

    /// Reads one request (a head up to an empty line, then its
    /// `Content-Length` body), answers it and closes the connection.
    private static func answer(_ client: Int32, _ shared: Shared) {
        defer { close(client) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let endOfHead = Array("\r\n\r\n".utf8)
        var bodyStart: Int?
        var bodyLength = 0
        while !shared.stopped.value {
            if let start = bodyStart, received.count >= start + bodyLength { break }
            var entry = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 100)
            if ready < 0 && errno != EINTR { return }
            if ready <= 0 { continue }
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            received += buffer[0..<count]
            if bodyStart == nil, let end = received.firstRange(of: endOfHead) {
                bodyStart = end.upperBound
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                for line in head.split(separator: "\r\n").dropFirst() {
                    let field = line.split(separator: ":", maxSplits: 1)
                    if field.count == 2, field[0].lowercased() == "content-length" {
                        bodyLength = Int(field[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
        }
        guard let start = bodyStart else { return }
        let head = String(decoding: received[..<start], as: UTF8.self)
        let request = head.split(separator: "\r\n").first?.split(separator: " ") ?? []
        let path = request.count == 3 ? String(request[1]) : ""
        shared.paths.withLock { $0.append(path) }
        let body = Array((shared.answers[path] ?? emptyAnswer).utf8)
        let response =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        var bytes = Array(response.utf8) + body
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { raw in
                #if canImport(Glibc)
                    Glibc.send(client, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.send(client, raw.baseAddress, raw.count, 0)
                #endif
            }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return }
            bytes.removeFirst(sent)
        }
    }
}
