/// The JSON reader and writer behind the file format (<doc:FileFormat>).
///
/// It is written here rather than taken from Foundation so that integers and
/// doubles stay apart, nesting depth is limited while parsing (not after), a
/// syntax error names its line and column, and the output is byte-for-byte
/// stable: two-space indentation, `" : "` separators, keys sorted.
package enum JSONText {
    /// Parses `bytes` as one JSON value.
    ///
    /// - Parameters:
    ///   - source: the file name used in error messages.
    ///   - maxDepth: arrays and objects nested deeper than this are an error.
    package static func parse(_ bytes: [UInt8], source: String, maxDepth: Int = 512) throws
        -> PreferenceValue
    {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, source: source, maxDepth: maxDepth)
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.index != buffer.count {
                throw parser.error("unexpected text after the end of the JSON value")
            }
            return value
        }
    }

    /// Whether the bytes at `first` equal those at `second` (of `first`'s
    /// length); both lie inside `bytes`. Eight bytes at a time, then the rest.
    static func sameBytes(
        _ bytes: UnsafeRawBufferPointer, _ first: Range<Int>, _ second: Range<Int>
    ) -> Bool {
        guard first.count == second.count else { return false }
        var offset = 0
        while offset + 8 <= first.count {
            if bytes.loadUnaligned(fromByteOffset: first.lowerBound + offset, as: UInt64.self)
                != bytes.loadUnaligned(fromByteOffset: second.lowerBound + offset, as: UInt64.self)
            {
                return false
            }
            offset += 8
        }
        while offset < first.count {
            if bytes[first.lowerBound + offset] != bytes[second.lowerBound + offset] {
                return false
            }
            offset += 1
        }
        return true
    }

    /// The members of the object at `range` of `bytes`, which was checked
    /// as JSON already, each with its value, in the order of the text
    /// (duplicates kept); nil when the value there is no object. For a
    /// reader that wants a few known members and no dictionary of them.
    static func members(ofObjectAt range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>)
        -> [(key: String, value: PreferenceValue)]?
    {
        guard range.lowerBound < range.upperBound, bytes[range.lowerBound] == UInt8(ascii: "{")
        else { return nil }
        var parser = Parser(
            bytes: UnsafeBufferPointer(rebasing: bytes[range]), source: "", maxDepth: .max)
        return try? parser.parseMembers()
    }
}
