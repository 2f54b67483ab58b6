import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why an exchange with one endpoint failed; `sent` is false when the
/// request surely never reached a server (nothing was connected).
struct TransportFailure: Error {
    let message: String
    let sent: Bool
}

/// One HTTP/1.1 connection over a blocking TCP socket: requests with a
/// `Content-Length` body, responses with a length, chunked, or ending at
/// close. Every wait has a deadline, checked with `poll`.
///
/// Used for `http://` endpoints (see ``SocketTransport``); all the system
/// calls of the etcd backend are in this file.
final class HTTPConnection {
    let descriptor: Int32
    /// Bytes read but not yet consumed.
    private var buffer: [UInt8] = []
    private var start = 0
    /// Whether the connection can carry another request.
    private(set) var reusable = true

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Connects to `host:port` (every address it resolves to, in turn).
    static func open(host: String, port: Int, deadline: DispatchTime) throws(TransportFailure)
        -> HTTPConnection
    {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw TransportFailure(
                message: "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))",
                sent: false)
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let socketDescriptor = socket(
                address.pointee.ai_family, address.pointee.ai_socktype,
                address.pointee.ai_protocol)
            guard socketDescriptor >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            do {
                try connect(
                    socketDescriptor, to: address.pointee.ai_addr,
                    length: address.pointee.ai_addrlen, deadline: deadline)
                var one: Int32 = 1
                _ = setsockopt(
                    socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one,
                    socklen_t(MemoryLayout<Int32>.size))
                SocketSends.prepare(socketDescriptor)
                return HTTPConnection(descriptor: socketDescriptor)
            } catch {
                close(socketDescriptor)
                lastError = error.message
            }
        }
        throw TransportFailure(message: lastError, sent: false)
    }

    private static func connect(
        _ descriptor: Int32, to address: UnsafeMutablePointer<sockaddr>?, length: socklen_t,
        deadline: DispatchTime
    ) throws(TransportFailure) {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        if systemConnect(descriptor, address, length) == 0 { return }
        let code = errno
        guard code == EINPROGRESS else {
            throw TransportFailure(message: String(cString: strerror(code)), sent: false)
        }
        guard try wait(descriptor, for: Int16(POLLOUT), deadline: deadline) else {
            throw TransportFailure(message: "connection timed out", sent: false)
        }
        var failure: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size)
        if failure != 0 {
            throw TransportFailure(message: String(cString: strerror(failure)), sent: false)
        }
    }

    /// Waits until the descriptor is ready; false at the deadline.
    private static func wait(_ descriptor: Int32, for events: Int16, deadline: DispatchTime)
        throws(TransportFailure) -> Bool
    {
        while true {
            let now = DispatchTime.now()
            guard deadline > now else { return false }
            let milliseconds = min(
                (deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000 + 1, 250)
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(milliseconds))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR {
                throw TransportFailure(message: String(cString: strerror(errno)), sent: true)
            }
        }
    }

    // MARK: Writing

    /// Sends all of `bytes`.
    func send(_ bytes: [UInt8], deadline: DispatchTime) throws(TransportFailure) {
        var offset = 0
        while offset < bytes.count {
            guard try Self.wait(descriptor, for: Int16(POLLOUT), deadline: deadline) else {
                reusable = false
                throw TransportFailure(message: "timed out sending", sent: true)
            }
            let written = bytes[offset...].withUnsafeBytes { raw in
                SocketSends.send(descriptor, raw)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                reusable = false
                throw TransportFailure(message: String(cString: strerror(errno)), sent: true)
            }
            offset += written
        }
    }

    // MARK: Reading

    /// Reads more bytes into the buffer; false at end of stream. Stops
    /// waiting at the deadline or when `cancelled` says so (checked every 250 ms).
    private func fill(deadline: DispatchTime, cancelled: () -> Bool) throws(TransportFailure)
        -> Bool
    {
        while true {
            if cancelled() {
                reusable = false
                throw TransportFailure(message: "cancelled", sent: true)
            }
            let slice = min(deadline, DispatchTime.now() + 0.25)
            if try Self.wait(descriptor, for: Int16(POLLIN), deadline: slice) { break }
            if DispatchTime.now() >= deadline {
                reusable = false
                throw TransportFailure(message: "timed out waiting for an answer", sent: true)
            }
        }
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536 {
            // A long stream that never drains exactly: drop what was consumed.
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { raw in
            recv(descriptor, raw.baseAddress, raw.count, 0)
        }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return true }
            reusable = false
            throw TransportFailure(message: String(cString: strerror(errno)), sent: true)
        }
        if count == 0 {
            reusable = false
            return false
        }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    private var available: Int { buffer.count - start }

    /// The next line (without CRLF).
    private func line(deadline: DispatchTime, cancelled: () -> Bool) throws(TransportFailure)
        -> String
    {
        while true {
            if let end = buffer[start...].firstIndex(of: 0x0A) {
                var stop = end
                if stop > start && buffer[stop - 1] == 0x0D { stop -= 1 }
                let text = String(decoding: buffer[start..<stop], as: UTF8.self)
                start = end + 1
                return text
            }
            guard try fill(deadline: deadline, cancelled: cancelled) else {
                throw TransportFailure(message: "the connection closed", sent: true)
            }
        }
    }

    private func bytes(_ count: Int, deadline: DispatchTime, cancelled: () -> Bool)
        throws(TransportFailure) -> [UInt8]
    {
        while available < count {
            guard try fill(deadline: deadline, cancelled: cancelled) else {
                throw TransportFailure(message: "the connection closed mid-answer", sent: true)
            }
        }
        defer { start += count }
        return Array(buffer[start..<(start + count)])
    }

    /// A response's status and headers (names lowercased).
    struct Head {
        var status: Int
        var headers: [String: String]
        var isChunked: Bool {
            headers["transfer-encoding"]?.lowercased().contains("chunked") == true
        }
    }

    /// Sends a POST and reads the status line and headers of the answer.
    func post(
        path: String, host: String, body: [UInt8], headers: [(String, String)],
        deadline: DispatchTime, cancelled: () -> Bool = { false }
    ) throws(TransportFailure) -> Head {
        var request = "POST \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        request += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        try send(Array(request.utf8) + body, deadline: deadline)
        let statusLine = try line(deadline: deadline, cancelled: cancelled)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            reusable = false
            throw TransportFailure(
                message: "not an HTTP answer: \(statusLine.prefix(80))", sent: true)
        }
        var head = Head(status: status, headers: [:])
        while true {
            let header = try line(deadline: deadline, cancelled: cancelled)
            if header.isEmpty { break }
            guard let colon = header.firstIndex(of: ":") else { continue }
            let name = header[..<colon].lowercased()
            let value = header[header.index(after: colon)...].trimmingSpaces()
            head.headers[name] = value
        }
        if head.headers["connection"]?.lowercased() == "close" { reusable = false }
        return head
    }

    /// The whole body of a response whose head was read.
    func body(of head: Head, deadline: DispatchTime) throws(TransportFailure) -> [UInt8] {
        if head.isChunked {
            var body: [UInt8] = []
            while let chunk = try nextChunk(deadline: deadline) { body += chunk }
            return body
        }
        if let length = head.headers["content-length"].flatMap({ Int($0) }) {
            return try bytes(length, deadline: deadline, cancelled: { false })
        }
        // No length: the body ends when the server closes the connection.
        reusable = false
        while try fill(deadline: deadline, cancelled: { false }) {}
        defer { start = buffer.count }
        return Array(buffer[start...])
    }

    /// The next chunk of a chunked body, or nil after the last one.
    func nextChunk(deadline: DispatchTime, cancelled: () -> Bool = { false })
        throws(TransportFailure) -> [UInt8]?
    {
        let sizeLine = try line(deadline: deadline, cancelled: cancelled)
        let sizeText = sizeLine.split(separator: ";").first.map(String.init) ?? ""
        guard let size = Int(sizeText.trimmingSpaces(), radix: 16) else {
            reusable = false
            throw TransportFailure(message: "bad chunk size '\(sizeLine.prefix(20))'", sent: true)
        }
        if size == 0 {
            // Trailers, up to the empty line.
            while try !line(deadline: deadline, cancelled: cancelled).isEmpty {}
            return nil
        }
        let data = try bytes(size, deadline: deadline, cancelled: cancelled)
        _ = try line(deadline: deadline, cancelled: cancelled)
        return data
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}

/// `connect(2)`, named apart from ``HTTPConnection``'s own static `connect`.
private func systemConnect(
    _ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t
) -> Int32 {
    #if canImport(Glibc)
        Glibc.connect(descriptor, address, length)
    #elseif canImport(Musl)
        Musl.connect(descriptor, address, length)
    #else
        Darwin.connect(descriptor, address, length)
    #endif
}
