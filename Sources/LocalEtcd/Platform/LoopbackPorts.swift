import Synchronization

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

/// Ports on 127.0.0.1 for etcd members and test servers: free ports
/// outside the kernel's local range, never handed out twice, and bound
/// loopback sockets.
package enum LoopbackPorts {
    /// Ports never handed out before in this process.
    private static let handedOut = Mutex<Set<Int>>([])

    /// No free port (or socket) could be had.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Ports that were free a moment ago, chosen at random outside the
    /// range the kernel takes the local ports of connections from
    /// (`ip_local_port_range`). A port from that range (bind port 0, then
    /// release it) can be taken by any connection made before the member
    /// binds it, and etcd clients make many: the member then fails with
    /// "address already in use". No port is handed out twice in one
    /// process, so two clusters never share one.
    package static func free(_ count: Int) throws(Failure) -> [Int] {
        let range = outsideTheLocalRange()
        var ports: [Int] = []
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 where ports.count < count {
            let port = Int.random(in: range, using: &generator)
            guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            if let socket = bind(port: port) {
                close(socket)
                ports.append(port)
            }
        }
        guard ports.count == count else {
            throw Failure(description: "no \(count) free loopback ports in \(range)")
        }
        return ports
    }

    /// Ports no connection is given a local port from: below the kernel's
    /// range where there is room, else above it.
    package static func outsideTheLocalRange() -> ClosedRange<Int> {
        let text =
            (try? Data(
                contentsOf: URL(fileURLWithPath: "/proc/sys/net/ipv4/ip_local_port_range")))
            .map { String(decoding: $0, as: UTF8.self) }
        let bounds = (text ?? "").split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        // Without the file (Darwin): the IANA dynamic range, Darwin's default.
        let (low, high) = bounds.count == 2 ? (bounds[0], bounds[1]) : (49_152, 65_535)
        if low - 10_000 >= 2_000 { return 10_000...(low - 1) }
        if 65_535 - high >= 2_000 { return (high + 1)...65_535 }
        return 1_024...65_535
    }

    /// 127.0.0.1 at `port`, as the socket calls take it.
    package static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A socket bound to `port` on loopback (0: any free port), with
    /// `SO_REUSEADDR` as etcd's own listeners have it unless asked not to;
    /// nil when it cannot be bound.
    package static func bind(port: Int, reuseAddress: Bool = true) -> Int32? {
        #if canImport(Glibc)
            let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let handle = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard handle >= 0 else { return nil }
        var reuse: Int32 = reuseAddress ? 1 : 0
        _ = setsockopt(
            handle, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = address(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                    Glibc.bind(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                #else
                    Darwin.bind(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                #endif
            }
        }
        guard bound else {
            close(handle)
            return nil
        }
        return handle
    }

    /// Ports bound on loopback and not listening: a connection to one is
    /// refused, and no other process can take it until its socket is closed.
    package static func bound(_ count: Int) throws(Failure) -> (ports: [Int], sockets: [Int32]) {
        var sockets: [Int32] = []
        var ports: [Int] = []
        for _ in 0..<count {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            guard let socket = bind(port: 0, reuseAddress: false),
                withUnsafeMutablePointer(
                    to: &address,
                    {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            getsockname(socket, $0, &length) == 0
                        }
                    })
            else {
                for socket in sockets { close(socket) }
                throw Failure(description: "cannot bind \(count) loopback sockets")
            }
            sockets.append(socket)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return (ports, sockets)
    }
}
