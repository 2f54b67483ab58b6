#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The binary form (`bplist00`): a header, objects, an offset table and a
/// 32-byte trailer. Every offset and count is checked against the file, and
/// an object that contains itself is an error, so any input is safe to read.
struct BinaryPropertyList {
    let bytes: [UInt8]
    let file: String
    private var offsetSize = 0
    private var referenceSize = 0
    private var objectCount = 0
    private var tableOffset = 0
    /// Objects left to decode: shared references could otherwise expand a
    /// small file into an enormous tree.
    private var budget = 1_000_000

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    private func error(_ reason: String) -> PreferencesError {
        .legacyFormat(file: file, line: nil, column: nil, reason: reason)
    }

    private func at(_ path: String) -> String { path.isEmpty ? "" : " at '\(path)'" }

    mutating func root() throws -> PreferenceValue {
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw error("not a binary property list (too short or wrong header)")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            let count = Int(exactly: unsigned(at: trailer + 8, size: 8)),
            let top = Int(exactly: unsigned(at: trailer + 16, size: 8)),
            let table = Int(exactly: unsigned(at: trailer + 24, size: 8)),
            count > 0, top < count, table >= 8, table <= trailer,
            count <= (trailer - table) / offsetSize
        else {
            throw error("the binary property list trailer is invalid")
        }
        objectCount = count
        tableOffset = table
        var visiting = Set<Int>()
        return try object(top, path: "", visiting: &visiting)
    }

    private func unsigned(at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private func objectOffset(_ reference: Int) throws -> Int {
        guard reference >= 0, reference < objectCount else {
            throw error("object reference \(reference) is out of range")
        }
        let offset = unsigned(at: tableOffset + reference * offsetSize, size: offsetSize)
        guard offset >= 8, offset < UInt64(tableOffset) else {
            throw error("object \(reference) has an invalid offset \(offset)")
        }
        return Int(offset)
    }

    private func require(_ offset: Int, _ length: Int, _ what: String) throws {
        guard length >= 0, offset <= tableOffset, length <= tableOffset - offset else {
            throw error("\(what) at byte offset \(offset) runs past the object table")
        }
    }

    /// The element count of a collection or string whose marker is at
    /// `offset`, and where its contents start.
    private func count(marker offset: Int) throws -> (count: Int, start: Int) {
        let low = Int(bytes[offset] & 0x0F)
        guard low == 0x0F else { return (low, offset + 1) }
        try require(offset + 1, 1, "a length")
        let sizeMarker = bytes[offset + 1]
        guard sizeMarker & 0xF0 == 0x10, sizeMarker & 0x0F <= 3 else {
            throw error("invalid length marker at byte offset \(offset + 1)")
        }
        let size = 1 << Int(sizeMarker & 0x0F)
        try require(offset + 2, size, "a length")
        guard let count = Int(exactly: unsigned(at: offset + 2, size: size)), count >= 0 else {
            throw error("invalid length at byte offset \(offset + 2)")
        }
        return (count, offset + 2 + size)
    }

    private func references(_ start: Int, _ count: Int) throws -> [Int] {
        guard count <= tableOffset / max(referenceSize, 1) else {
            throw error("a collection at byte offset \(start) is too long")
        }
        try require(start, count * referenceSize, "a collection")
        return (0..<count).map { index in
            Int(
                truncatingIfNeeded: unsigned(at: start + index * referenceSize, size: referenceSize)
            )
        }
    }

    private mutating func object(_ reference: Int, path: String, visiting: inout Set<Int>) throws
        -> PreferenceValue
    {
        let offset = try objectOffset(reference)
        budget -= 1
        guard budget >= 0 else {
            throw error("too many objects: shared references expand beyond 1,000,000 values")
        }
        guard visiting.count < 512 else { throw error("objects nested deeper than 512\(at(path))") }
        guard visiting.insert(reference).inserted else {
            throw error("object \(reference) contains itself\(at(path))")
        }
        defer { visiting.remove(reference) }
        let marker = bytes[offset]
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw error("unsupported object 0x\(String(marker, radix: 16))\(at(path))")
            }
        case 0x1:
            let size = 1 << Int(marker & 0x0F)
            try require(offset + 1, size, "an integer")
            switch size {
            case 1, 2, 4: return .int(Int64(unsigned(at: offset + 1, size: size)))
            case 8: return .int(Int64(bitPattern: unsigned(at: offset + 1, size: 8)))
            case 16:
                // 128-bit: Apple writes UInt64 values above Int64.max this way.
                let high = unsigned(at: offset + 1, size: 8)
                let low = unsigned(at: offset + 9, size: 8)
                let value = Int64(bitPattern: low)
                if (high == 0 && value >= 0) || (high == .max && value < 0) { return .int(value) }
                throw error(
                    "integer\(at(path)) does not fit in a signed 64-bit integer"
                        + (high == 0 ? " (\(low))" : ""))
            default: throw error("invalid integer size\(at(path))")
            }
        case 0x2:
            switch marker & 0x0F {
            case 2:
                try require(offset + 1, 4, "a real")
                return .double(
                    Double(Float(bitPattern: UInt32(unsigned(at: offset + 1, size: 4)))))
            case 3:
                try require(offset + 1, 8, "a real")
                return .double(Double(bitPattern: unsigned(at: offset + 1, size: 8)))
            default: throw error("invalid real size\(at(path))")
            }
        case 0x3:
            guard marker == 0x33 else { throw error("invalid date marker\(at(path))") }
            try require(offset + 1, 8, "a date")
            let seconds = Double(bitPattern: unsigned(at: offset + 1, size: 8))
            // Seconds since 2001-01-01, to the nearest microsecond (as
            // plistlib and Foundation's Date keep it).
            let micros = (seconds * 1_000_000).rounded()
            guard micros.isFinite, abs(micros) < 9e18 else {
                throw error("date\(at(path)) is out of range")
            }
            let total = Int64(micros) + 978_307_200 * 1_000_000
            let (whole, fraction) = total.quotientAndRemainder(dividingBy: 1_000_000)
            let (unix, micro) = fraction < 0 ? (whole - 1, fraction + 1_000_000) : (whole, fraction)
            return .string(PropertyListParser.isoDate(unixSeconds: unix, microseconds: micro))
        case 0x4:
            let (length, start) = try count(marker: offset)
            try require(start, length, "data")
            return .string(Data(bytes[start..<start + length]).base64EncodedString())
        case 0x5:
            let (length, start) = try count(marker: offset)
            try require(start, length, "a string")
            guard bytes[start..<start + length].allSatisfy({ $0 < 0x80 }) else {
                throw error("ASCII string\(at(path)) holds non-ASCII bytes")
            }
            return .string(String(decoding: bytes[start..<start + length], as: UTF8.self))
        case 0x6:
            let (length, start) = try count(marker: offset)
            guard length <= tableOffset / 2 else { throw error("a string is too long\(at(path))") }
            try require(start, length * 2, "a string")
            let units = (0..<length).map { UInt16(unsigned(at: start + $0 * 2, size: 2)) }
            guard let text = String(validating: units, as: UTF16.self) else {
                throw error("string\(at(path)) holds an unpaired UTF-16 surrogate")
            }
            return .string(text)
        case 0x8:
            throw error(
                "keyed-archive UID\(at(path)) cannot be stored (the value is an NSKeyedArchiver object)"
            )
        case 0xA, 0xC:
            let (length, start) = try count(marker: offset)
            return .array(
                try references(start, length).enumerated().map { index, child in
                    try object(child, path: "\(path)[\(index)]", visiting: &visiting)
                })
        case 0xD:
            let (length, start) = try count(marker: offset)
            let keys = try references(start, length)
            let values = try references(start + length * referenceSize, length)
            var result: [String: PreferenceValue] = [:]
            for (keyReference, valueReference) in zip(keys, values) {
                guard
                    case .string(let key) = try object(
                        keyReference, path: path, visiting: &visiting)
                else {
                    throw error("a dictionary key\(at(path)) is not a string")
                }
                result[key] = try object(
                    valueReference, path: PropertyListParser.join(path, key: key),
                    visiting: &visiting)
            }
            return .object(result)
        default:
            throw error(
                "unknown object type 0x\(String(marker, radix: 16)) at byte offset \(offset)\(at(path))"
            )
        }
    }
}
