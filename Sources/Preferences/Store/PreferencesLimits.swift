/// Limits that protect a process from oversized or hostile files (S11, <doc:StoreGuarantees>)
/// and from waiting forever for another process's lock (S15).
///
/// A file over the limits is treated as corrupt when read; a write that would
/// exceed them fails with ``PreferencesError/limitExceeded(file:reason:)`` and
/// changes nothing.
///
/// ```swift
/// var limits = PreferencesLimits()
/// limits.maxFileSize = 1 << 20
/// limits.lockTimeout = .seconds(2)
/// let store = try await PreferencesStore(fileURL: url, limits: limits)
/// ```
public struct PreferencesLimits: Sendable, Equatable {
    /// The largest file the store reads or writes, in bytes (16 MiB).
    public var maxFileSize: Int = 16 << 20
    /// The deepest nesting of arrays and objects inside a value (64).
    public var maxDepth: Int = 64
    /// The longest key, in bytes of UTF-8 (1 KiB).
    public var maxKeyLength: Int = 1024
    /// How long a write waits for another process's lock on the store
    /// before it fails with ``PreferencesError/io(operation:path:code:message:)``
    /// (10 seconds; S15, <doc:StoreGuarantees>).
    public var lockTimeout: Duration = .seconds(10)
    /// How much history the store keeps: the last 1,000 changes, at most
    /// 1 MiB of them (H4, <doc:HistoryAndUndo>; see ``HistoryLimit``).
    public var history: HistoryLimit = .default

    /// The default limits: 16 MiB files, 64 levels of nesting, 1 KiB keys,
    /// 10 second lock waits, 1,000 history entries.
    public init() {}

    /// Why `key` cannot be stored, or nil when it can.
    func problem(withKey key: String) -> String? {
        if key.isEmpty { return "keys may not be empty" }
        if key.utf8.count > maxKeyLength {
            return "key is \(key.utf8.count) bytes, over the limit of \(maxKeyLength)"
        }
        // C0 controls and DEL are single bytes in UTF-8; C1 controls
        // (U+0080 to U+009F) are 0xC2 followed by 0x80 to 0x9F.
        // Most keys are printable ASCII, checked eight bytes at a time.
        let control =
            key.utf8.withContiguousStorageIfAvailable { bytes in
                var previous: UInt8 = 0
                for byte in bytes[ByteScan.printableASCIIPrefix(bytes)...] {
                    if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte < 0xA0) {
                        return true
                    }
                    previous = byte
                }
                return false
            }
            ?? key.unicodeScalars.contains(where: {
                $0.value < 0x20 || (0x7F..<0xA0).contains($0.value)
            })
        if control { return "keys may not contain control characters" }
        return nil
    }
}
