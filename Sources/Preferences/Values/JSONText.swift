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

    /// Parses `bytes` as one JSON value, as ``parse(_:source:maxDepth:)``
    /// does, except that when the top-level object's member `deferred` is
    /// an object, its members' values are checked (with the same errors at
    /// the same places) but not built: the result has `null` there, and
    /// beside it the member's keys with the byte ranges of their values, in
    /// the order of the text (the last object wins when the member repeats).
    static func parse(
        _ bytes: [UInt8], source: String, maxDepth: Int, deferring deferred: String
    ) throws -> (value: PreferenceValue, deferred: [(key: String, range: Range<Int>)]?) {
        let parsed = try parseDocument(
            bytes, source: source, maxDepth: maxDepth, deferring: deferred, keyOrderOf: nil)
        return (parsed.value, parsed.deferred?.map { ($0.key(in: bytes), $0.value) })
    }

    /// A member of the object whose values are checked but not built: where
    /// its key and its value are in the text.
    struct DeferredMember {
        /// The key's string literal, quotes included.
        var quotedKey: Range<Int>
        /// Whether the key is its text between the quotes as it stands (no
        /// escapes), so that it is made straight from those bytes.
        var keyIsLiteral: Bool
        /// The member's value.
        var value: Range<Int>

        /// The key's UTF-8, between the quotes (its value when ``keyIsLiteral``).
        var keyText: Range<Int> { quotedKey.lowerBound + 1..<quotedKey.upperBound - 1 }

        /// The key, from the text it was read from (and checked in).
        func key(in bytes: [UInt8]) -> String {
            if keyIsLiteral { return String(decoding: bytes[keyText], as: UTF8.self) }
            let parsed = try? JSONText.parse(Array(bytes[quotedKey]), source: "", maxDepth: 1)
            guard case .string(let key)? = parsed else {
                preconditionFailure("a deferred member's key was checked when it was read")
            }
            return key
        }
    }

    /// A top-level object read by
    /// ``parseDocument(_:source:maxDepth:deferring:keyOrderOf:)``.
    struct Document {
        var value: PreferenceValue
        /// The deferred member's members, in the order of the text.
        var deferred: [DeferredMember]?
        /// Where the keys of the member named by `keyOrderOf` are, as string
        /// literals (quotes included), in the order of the text, duplicates
        /// included; nil when that member is no object.
        var keyOrder: [Range<Int>]?
        /// Where the elements of the member named by `skimming` are, in the
        /// order of the text; nil when that member is no array.
        var skimmed: [Range<Int>]?
    }

    /// ``parse(_:source:maxDepth:deferring:)``, which also gives where the
    /// keys of the top-level member `ordered` (when it is an object) are, in
    /// the order the text has them, which its dictionary forgets. The store
    /// reads `values` so: a file it wrote lists `modified` in the same order,
    /// and comparing the two lists' bytes pairs each key with its record
    /// without hashing the keys again (``ChangeLog``).
    ///
    /// The elements of the top-level member `skimmed`, when it is an array,
    /// are checked as JSON but not built: the result has `null` there, and
    /// their places in the text beside it.
    static func parseDocument(
        _ bytes: [UInt8], source: String, maxDepth: Int, deferring deferred: String,
        keyOrderOf ordered: String?, skimming skimmed: String? = nil
    ) throws -> Document {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, source: source, maxDepth: maxDepth)
            parser.deferredName = deferred
            parser.orderedName = ordered
            parser.skimmedName = skimmed
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.index != buffer.count {
                throw parser.error("unexpected text after the end of the JSON value")
            }
            return Document(
                value: value, deferred: parser.deferredMembers, keyOrder: parser.orderedKeys,
                skimmed: parser.skimmedElements)
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
