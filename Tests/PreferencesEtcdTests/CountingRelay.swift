import Foundation
import LocalEtcd
import Preferences
import PreferencesTestSupport
import PreferencesTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A relay on a loopback port in front of one `http://` member: it passes
/// every connection's bytes both ways unchanged and counts the requests
/// that go through, by path. A client pointed at ``url`` shows the calls
/// it makes, such as how often it signs in, whatever it keeps to itself.
///
/// A request is counted before it is passed on, so once a call has its
/// answer, the count includes it. Requests are read as the backend's socket
/// transport sends them: a head that ends in an empty line, then a
/// `Content-Length` body.
final class CountingRelay: Sendable {
    /// Where clients connect instead of the member.
    let url: URL
    private let shared: Shared

    /// What the relay's threads share; they hold this, not the relay, so
    /// the relay stops when the test lets go of it.
    private final class Shared: Sendable {
        let listener: Int32
        let memberPort: Int
        let counts = Locked<[String: Int]>([:])
        let stopped = Locked(false)
        let watchesFrozen = Locked(false)

        init(listener: Int32, memberPort: Int) {
            self.listener = listener
            self.memberPort = memberPort
        }
    }

    struct RelayError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts relaying to `member` (an `http://` URL on loopback).
    init(to member: URL) throws {
        guard member.scheme == "http", let memberPort = member.port else {
            throw RelayError(description: "the relay needs an http:// URL with a port: \(member)")
        }
        guard let listener = LoopbackPorts.bind(port: 0, reuseAddress: false) else {
            throw RelayError(description: "no loopback port to listen on")
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
            throw RelayError(description: "cannot listen on loopback: \(reason)")
        }
        url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        let shared = Shared(listener: listener, memberPort: memberPort)
        self.shared = shared
        Thread { Self.acceptConnections(shared) }.start()
    }

    /// How many requests for `path` (`/v3/auth/authenticate`) went through so far.
    /// What ``requests(to:)`` counts etcd's refusals of a token under.
    static let rejected = "token refused"
    private static let rejectedToken = Array("invalid auth token".utf8)

    func requests(to path: String) -> Int {
        shared.counts.withLock { $0[path, default: 0] }
    }

    /// Every path and its count, for failure messages.
    var counts: [String: Int] { shared.counts.value }

    /// Stops passing on what the member sends on watch connections (those
    /// whose first request is `/v3/watch`) from now on, and keeps them
    /// open: a watch that is connected but silent, while every other
    /// request goes through.
    func freezeWatches() {
        shared.watchesFrozen.withLock { $0 = true }
    }

    /// Stops accepting and closes every connection within 100 ms.
    func stop() {
        shared.stopped.withLock { $0 = true }
    }

    deinit { stop() }

    // MARK: On the relay's threads

    /// How long a thread waits for bytes before it looks whether to stop.
    private static let pollMilliseconds: Int32 = 100

    private static func acceptConnections(_ shared: Shared) {
        defer { close(shared.listener) }
        while !shared.stopped.value {
            var entry = pollfd(fd: shared.listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, pollMilliseconds) > 0 else { continue }
            let client = accept(shared.listener, nil, nil)
            guard client >= 0 else { continue }
            guard let member = connectLoopback(port: shared.memberPort) else {
                // The client sees its connection closed, as with a member gone.
                close(client)
                continue
            }
            Thread { relay(client, member, shared) }.start()
        }
    }

    private static func relay(_ client: Int32, _ member: Int32, _ shared: Shared) {
        defer {
            close(client)
            close(member)
        }
        var requests = RequestReader()
        var firstPath: String?
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !shared.stopped.value {
            let frozen = firstPath == "/v3/watch" && shared.watchesFrozen.value
            var entries = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: member, events: frozen ? 0 : Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&entries, 2, pollMilliseconds)
            if ready < 0 && errno != EINTR { return }
            if ready <= 0 { continue }
            for (index, entry) in entries.enumerated() where entry.revents != 0 {
                let (from, to) = index == 0 ? (client, member) : (member, client)
                let count = read(from, &buffer, buffer.count)
                // End of file or an error on either side ends both.
                if count <= 0 { return }
                let bytes = buffer[0..<count]
                if index == 0 {
                    requests.take(bytes) { path in
                        if firstPath == nil { firstPath = path }
                        shared.counts.withLock { $0[path, default: 0] += 1 }
                    }
                } else if firstPath == "/v3/watch" && shared.watchesFrozen.value {
                    // Read after the freeze: held back for good.
                    continue
                } else if bytes.firstRange(of: Self.rejectedToken) != nil {
                    // etcd's answer to a call whose token it no longer takes.
                    shared.counts.withLock { $0[Self.rejected, default: 0] += 1 }
                }
                guard sendAll(bytes, to: to) else { return }
            }
        }
    }

    private static func connectLoopback(port: Int) -> Int32? {
        guard let socket = LoopbackPorts.bind(port: 0, reuseAddress: false) else {
            return nil
        }
        var address = LoopbackPorts.address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(socket)
            return nil
        }
        #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(
                socket, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return socket
    }

    /// Writes every byte; false when the other side is gone.
    private static func sendAll(_ bytes: ArraySlice<UInt8>, to socket: Int32) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let sent = bytes[offset...].withUnsafeBytes { raw in
                #if canImport(Glibc)
                    Glibc.send(socket, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.send(socket, raw.baseAddress, raw.count, 0)
                #endif
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }
}

/// Finds the requests in the bytes a client sends on one connection: a
/// head up to an empty line, whose first line is `METHOD PATH VERSION`,
/// then as many body bytes as its `Content-Length` says.
struct RequestReader {
    private var head: [UInt8] = []
    private var bodyLeft = 0
    private static let endOfHead: [UInt8] = Array("\r\n\r\n".utf8)

    /// Reads `bytes`, calling `found` with the path of each request whose head ends in them.
    mutating func take(_ bytes: ArraySlice<UInt8>, _ found: (String) -> Void) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bodyLeft > 0 {
                let skipped = min(bodyLeft, bytes.endIndex - index)
                bodyLeft -= skipped
                index += skipped
                continue
            }
            head.append(bytes[index])
            index += 1
            guard head.count >= 4, head.suffix(4).elementsEqual(Self.endOfHead) else { continue }
            let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
            head = []
            let request = lines.first?.split(separator: " ") ?? []
            if request.count == 3 { found(String(request[1])) }
            for line in lines.dropFirst() {
                let field = line.split(separator: ":", maxSplits: 1)
                if field.count == 2, field[0].lowercased() == "content-length" {
                    bodyLeft = Int(field[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
    }
}
