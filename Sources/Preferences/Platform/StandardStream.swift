#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard output or standard error, written without buffering: each
/// call's text goes out at once, whole, so the lines of `prefs watch` or of
/// a test's child process reach a pipe as they happen.
package struct StandardStream: Sendable {
    private let descriptor: Int32

    package static let output = StandardStream(descriptor: 1)
    package static let error = StandardStream(descriptor: 2)

    /// Writes all of `text`. Text for a stream that cannot take it (closed,
    /// disk full) is lost: there is nowhere left to say so.
    package func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard var next = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let written = writeSome(descriptor, next, left)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                next += written
                left -= written
            }
        }
    }
}

private func writeSome(_ descriptor: Int32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
