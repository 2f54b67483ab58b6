// The pieces of a file revision (see `FileStorage`): its text, built without
// allocation, and the hash of the file's bytes.

/// The text of a file revision, built in a fixed buffer: eight numbers of at
/// most 20 digits and a sign each, and their separators, fit in 192 bytes.
struct RevisionToken {
    private var bytes:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
        ) = (
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
        )
    private var count = 0

    mutating func append(_ character: Unicode.Scalar) {
        put(UInt8(ascii: character))
    }

    mutating func append(decimal value: UInt64) {
        // Digits come out last first: count them, then fill from the right.
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var remaining = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            put(UInt8(ascii: "0") + UInt8(remaining % 10), at: count + offset)
            remaining /= 10
        }
        count += digits
    }

    mutating func append(signed value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        append(decimal: value.magnitude)
    }

    mutating func append(hex value: UInt64) {
        let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        for index in 0..<digits {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(4 * (digits - 1 - index))) & 0xF
            put(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
        }
    }

    var string: String {
        withUnsafeBytes(of: bytes) { raw in
            String(decoding: UnsafeRawBufferPointer(rebasing: raw[..<count]), as: UTF8.self)
        }
    }

    private mutating func put(_ byte: UInt8) {
        put(byte, at: count)
        count += 1
    }

    private mutating func put(_ byte: UInt8, at offset: Int) {
        precondition(offset < 192, "a revision token is at most 192 bytes")
        withUnsafeMutableBytes(of: &bytes) { $0[offset] = byte }
    }
}

/// A 64-bit hash of a file's bytes, for revisions (not for security).
enum ContentHash {
    static func of(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { raw in
            let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
            let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
            @inline(__always) func word(at offset: Int) -> UInt64 {
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            }
            @inline(__always) func mix(_ lane: UInt64, _ word: UInt64) -> UInt64 {
                let sum = lane &+ word &* prime2
                return (sum << 31 | sum >> 33) &* prime1
            }
            var offset = 0
            var hash = prime1 &+ UInt64(raw.count)
            if raw.count >= 32 {
                // Four lanes of eight bytes, independent of one another, so
                // that their multiplications overlap: a file of megabytes is
                // hashed at the speed of memory, not of one long chain.
                var lanes = (prime1 &+ prime2, prime2, UInt64(0), 0 &- prime1)
                while offset + 32 <= raw.count {
                    lanes.0 = mix(lanes.0, word(at: offset))
                    lanes.1 = mix(lanes.1, word(at: offset + 8))
                    lanes.2 = mix(lanes.2, word(at: offset + 16))
                    lanes.3 = mix(lanes.3, word(at: offset + 24))
                    offset += 32
                }
                hash =
                    hash &+ (lanes.0 << 1 | lanes.0 >> 63) &+ (lanes.1 << 7 | lanes.1 >> 57)
                    &+ (lanes.2 << 12 | lanes.2 >> 52) &+ (lanes.3 << 18 | lanes.3 >> 46)
            }
            while offset + 8 <= raw.count {
                let mixed = hash ^ (word(at: offset) &* prime2)
                hash = (mixed << 27 | mixed >> 37) &* prime1
                offset += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < raw.count {
                tail |= UInt64(raw[offset]) << shift
                shift += 8
                offset += 1
            }
            hash = (hash ^ (tail &* prime2)) &* prime1
            hash ^= hash >> 33
            hash = hash &* prime2
            hash ^= hash >> 29
            return hash
        }
    }
}
