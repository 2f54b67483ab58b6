extension LegacyXML {
    /// The text of an XML document as UTF-8 without a byte order mark, decoded
    /// the way CoreFoundation decides a property list's encoding:
    ///
    /// 1. A byte order mark wins, whatever the declaration says: UTF-32
    ///    (`00 00 FE FF`, `FF FE 00 00`), UTF-8 (`EF BB BF`), UTF-16
    ///    (`FE FF`, `FF FE`).
    /// 2. Without one, a zero in the first two bytes means UTF-16 (XML 1.0
    ///    appendix F: `<?` is `3C 00 3F 00` little-endian, `00 3C 00 3F`
    ///    big-endian); the byte that is zero gives the byte order.
    /// 3. Otherwise the `encoding` of the XML declaration: UTF-8, ISO-8859-1
    ///    (Latin-1) or US-ASCII. No declaration, or none naming an encoding,
    ///    is UTF-8.
    ///
    /// A declaration of UTF-16 or UTF-32 on bytes that are neither, an
    /// encoding not listed here, and bytes that are not valid in the encoding
    /// are errors that say so (CoreFoundation reads a few more legacy
    /// encodings, such as MacRoman; such a file must be converted to UTF-8
    /// first).
    static func utf8Document(_ bytes: [UInt8], file: String) throws -> [UInt8] {
        if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) {
            return try TextDecoder(bytes: bytes, file: file).utf32(from: 4, bigEndian: true)
        }
        if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) {
            return try TextDecoder(bytes: bytes, file: file).utf32(from: 4, bigEndian: false)
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes[3...]) }
        if bytes.starts(with: [0xFE, 0xFF]) {
            return try TextDecoder(bytes: bytes, file: file).utf16(from: 2, bigEndian: true)
        }
        if bytes.starts(with: [0xFF, 0xFE]) {
            return try TextDecoder(bytes: bytes, file: file).utf16(from: 2, bigEndian: false)
        }
        if bytes.count >= 2, bytes[0] == 0 || bytes[1] == 0 {
            guard bytes[0] != bytes[1] else {
                throw PreferencesError.legacyFormat(
                    file: file, line: 1, column: 1,
                    reason: "the file starts with two zero bytes, which is no text encoding a "
                        + "property list may use (UTF-32 needs a byte order mark)")
            }
            return try TextDecoder(bytes: bytes, file: file).utf16(
                from: 0, bigEndian: bytes[0] == 0)
        }
        guard let declared = declaredEncoding(bytes) else { return bytes }
        let name = declared.lowercased()
        switch name {
        case "utf-8", "utf8":
            return bytes
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "latin-1",
            "l1", "iso-ir-100", "ibm819", "cp819", "csisolatin1":
            return PropertiesParser.latin1AsUTF8(bytes)
        case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us", "csascii":
            if let offset = bytes.firstIndex(where: { $0 >= 0x80 }) {
                throw LegacyXML.error(
                    "byte \(bytes[offset]) at byte offset \(offset) is not US-ASCII, the encoding "
                        + "the XML declaration names", at: offset, in: bytes, file: file)
            }
            return bytes
        default:
            if name.hasPrefix("utf-16") || name.hasPrefix("utf-32") || name.hasPrefix("ucs-")
                || name.hasPrefix("utf16") || name.hasPrefix("utf32")
            {
                throw PreferencesError.legacyFormat(
                    file: file, line: 1, column: 1,
                    reason: "the XML declaration declares the encoding '\(declared)', but the "
                        + "file has no byte order mark and its text is not in that encoding")
            }
            throw PreferencesError.legacyFormat(
                file: file, line: 1, column: 1,
                reason: "the XML declaration declares the encoding '\(declared)', which the "
                    + "importer does not read (it reads UTF-8, UTF-16, UTF-32, ISO-8859-1 and "
                    + "US-ASCII); convert the file to UTF-8")
        }
    }

    /// The `encoding` named by an XML declaration at the very start of
    /// `bytes` (`<?xml version="1.0" encoding="…"?>`), or nil.
    private static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let end = bytes.firstIndex(of: UInt8(ascii: ">")) ?? bytes.count
        let declaration = bytes[5..<end]
        guard var index = declaration.firstRange(of: "encoding".utf8)?.upperBound else {
            return nil
        }
        func skipSpace() {
            while index < declaration.endIndex,
                [0x20, 0x09, 0x0A, 0x0D].contains(declaration[index])
            {
                index += 1
            }
        }
        skipSpace()
        guard index < declaration.endIndex, declaration[index] == UInt8(ascii: "=") else {
            return nil
        }
        index += 1
        skipSpace()
        guard index < declaration.endIndex,
            declaration[index] == 0x22 || declaration[index] == 0x27
        else { return nil }
        let quote = declaration[index]
        let start = index + 1
        guard let close = declaration[start...].firstIndex(of: quote) else { return nil }
        return String(decoding: declaration[start..<close], as: UTF8.self)
    }

    /// UTF-16 and UTF-32 to UTF-8; errors give the byte offset in the file
    /// and the line and column of the text decoded so far.
    private struct TextDecoder {
        let bytes: [UInt8]
        let file: String
        var out: [UInt8] = []

        init(bytes: [UInt8], file: String) {
            self.bytes = bytes
            self.file = file
            out.reserveCapacity(bytes.count)
        }

        func error(_ reason: String) -> PreferencesError {
            LegacyXML.error(reason, at: out.count, in: out, file: file)
        }

        mutating func append(_ value: UInt32, at offset: Int, encoding: String) throws {
            guard let scalar = Unicode.Scalar(value) else {
                throw error("invalid \(encoding) at byte offset \(offset)")
            }
            UTF8.encode(scalar) { out.append($0) }
        }

        consuming func utf16(from start: Int, bigEndian: Bool) throws -> [UInt8] {
            guard (bytes.count - start) % 2 == 0 else {
                throw error(
                    "the file is UTF-16 but has an odd number of bytes: its last character is cut")
            }
            func unit(_ offset: Int) -> UInt32 {
                let (high, low) =
                    bigEndian
                    ? (bytes[offset], bytes[offset + 1]) : (bytes[offset + 1], bytes[offset])
                return UInt32(high) << 8 | UInt32(low)
            }
            var offset = start
            while offset < bytes.count {
                let first = unit(offset)
                if (0xD800...0xDBFF).contains(first), offset + 2 < bytes.count,
                    case let second = unit(offset + 2), (0xDC00...0xDFFF).contains(second)
                {
                    let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    try append(value, at: offset, encoding: "UTF-16")
                    offset += 4
                } else {
                    // A lone surrogate is not a scalar: `append` rejects it.
                    try append(first, at: offset, encoding: "UTF-16")
                    offset += 2
                }
            }
            return out
        }

        consuming func utf32(from start: Int, bigEndian: Bool) throws -> [UInt8] {
            guard (bytes.count - start) % 4 == 0 else {
                throw error(
                    "the file is UTF-32 but its length is not a multiple of 4 bytes: "
                        + "its last character is cut")
            }
            var offset = start
            while offset < bytes.count {
                var value: UInt32 = 0
                for index in 0..<4 {
                    let byte = UInt32(bytes[offset + (bigEndian ? index : 3 - index)])
                    value = value << 8 | byte
                }
                try append(value, at: offset, encoding: "UTF-32")
                offset += 4
            }
            return out
        }
    }
}
