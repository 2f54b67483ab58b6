#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who is running this process, for change metadata
/// (S18, <doc:StoreGuarantees>).
extension Platform {
    /// The name of the effective user (the one whose rights a write uses),
    /// or its numeric id when the user database has no entry for it.
    static func effectiveUserName() -> String {
        let uid = geteuid()
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        if status == 0, result != nil, let name = entry.pw_name {
            return String(cString: name)
        }
        return String(uid)
    }

    /// Whether the process runs with root's rights.
    static var isEffectivelyRoot: Bool { geteuid() == 0 }

    /// This machine's host name, for history entries (H2, <doc:HistoryAndUndo>).
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }()
}
