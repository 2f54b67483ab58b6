#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// What the package's other modules (the etcd backend, the CLI, the tools)
// ask of files and of their own executable, without system calls of their own.

/// The bytes of the file at `path`, read to its end (at most `limit`): an
/// etcd password file, which may also be a pipe (`<(pass show etcd)`).
///
/// - Throws: ``PreferencesError/io(operation:path:code:message:)``.
package func readWholeFile(_ path: String, limit: Int = 1 << 20) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    if descriptor < 0 { throw Platform.ioError("open", path) }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count < 0 { throw Platform.ioError("read", path) }
        if count == 0 { return bytes }
        bytes += chunk[..<count]
        if bytes.count > limit {
            throw PreferencesError.io(
                operation: "read", path: path, code: EFBIG, message: "over \(limit) bytes")
        }
    }
}

/// Whether `path` names a regular file, symbolic links followed.
package func isRegularFile(_ path: String) -> Bool {
    (try? Platform.fileStamp(path))?.isRegularFile == true
}

/// The absolute path of this process's executable: `/proc/self/exe` on
/// Linux, `_NSGetExecutablePath` made real on Darwin; nil when it cannot
/// be found.
package func ownExecutablePath() -> String? {
    #if canImport(Darwin)
        var size = UInt32(0)
        _ = _NSGetExecutablePath(nil, &size)
        var given = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&given, &size) == 0,
            let real = realpath(given, nil)
        else { return nil }
        defer { free(real) }
        return String(cString: real)
    #else
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #endif
}
