#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing to a socket whose peer has gone without the process receiving
/// `SIGPIPE`: Linux asks per send (`MSG_NOSIGNAL`), Darwin per socket
/// (`SO_NOSIGPIPE`). The only platform branches of the etcd transport.
enum SocketSends {
    /// Sets up a new socket so that no send on it raises `SIGPIPE`.
    static func prepare(_ descriptor: Int32) {
        #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(
                descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Sends what it can of `bytes` without raising `SIGPIPE`; the count
    /// sent, or -1 with `errno` set.
    static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Darwin)
            Darwin.send(descriptor, bytes.baseAddress, bytes.count, 0)
        #else
            Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        #endif
    }
}
