/// Looks for a byte eight bytes at a time, in a 64-bit word.
enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F

    /// The high bit of each byte of `word` that equals `byte`, and no other
    /// bit (exact, so the bits can be counted).
    @inline(__always)
    static func matches(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let zeroed = word ^ (ones &* UInt64(byte))
        return ~(((zeroed & lows) &+ lows) | zeroed | lows)
    }

    /// How many bytes at the start of `bytes` are printable ASCII (0x20 to
    /// 0x7E), counted eight at a time: a caller looking for control
    /// characters need look at the rest only. Stops at the first word
    /// holding any other byte, so the count is a multiple of eight or all
    /// of `bytes`.
    static func printableASCIIPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // A byte below 0x20 borrows into its high bit; a byte of 0x7F or
            // more has its high bit set once one is added (or already). A
            // borrow or carry between bytes comes only from such a byte.
            let below = (word &- 0x2020_2020_2020_2020) & ~word
            let above = (word &+ ones) | word
            if (below | above) & ~lows != 0 { return offset }
            offset += 8
        }
        while offset < raw.count, raw[offset] >= 0x20, raw[offset] < 0x7F { offset += 1 }
        return offset
    }

    /// Whether `bytes` holds `byte`.
    static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ byte: UInt8) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            if matches(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self), byte) != 0 {
                return true
            }
            offset += 8
        }
        while offset < raw.count {
            if raw[offset] == byte { return true }
            offset += 1
        }
        return false
    }

    /// The offset of the first `\n` or `\r` in `bytes` from `offset`, or
    /// the end of `bytes`.
    static func lineEnd(in bytes: UnsafeBufferPointer<UInt8>, from offset: Int) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = offset
        while offset + 8 <= raw.count {
            let word = UInt64(
                littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let found = matches(word, 0x0A) | matches(word, 0x0D)
            if found != 0 { return offset + found.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < raw.count && raw[offset] != 0x0A && raw[offset] != 0x0D { offset += 1 }
        return offset
    }

    /// The offset of the first `byte` in `bytes[start..<end]`, or `end`.
    static func firstIndex(
        of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int
    ) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = start
        while offset + 8 <= end {
            let word = UInt64(
                littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let found = matches(word, byte)
            if found != 0 { return offset + found.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < end && raw[offset] != byte { offset += 1 }
        return offset
    }

    /// The offset of the first byte of `bytes` that can end a `.properties`
    /// key (`=`, `:`, space, tab, form feed) or escape (`\\`), or the end.
    static func firstKeyEnd(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = UInt64(
                littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let found =
                matches(word, 0x3D) | matches(word, 0x3A) | matches(word, 0x20)
                | matches(word, 0x09) | matches(word, 0x0C) | matches(word, 0x5C)
            if found != 0 { return offset + found.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < raw.count {
            switch raw[offset] {
            case 0x3D, 0x3A, 0x20, 0x09, 0x0C, 0x5C: return offset
            default: offset += 1
            }
        }
        return offset
    }
}
