/// A small, strict XML reader shared by the shared-prefs and plist importers.
///
/// It reads a whole UTF-8 document into a tree: elements with attributes and
/// children, text (entities and character references decoded, CDATA included,
/// line ends normalised to `\n`), with comments, processing instructions and
/// the document type declaration skipped. It is written here rather than
/// taken from Foundation's `XMLParser` so that it is pure, exact about what
/// it accepts (`&#0;`, which Android writes, is a character like any other)
/// and safe to fuzz: nesting deeper than `maxDepth` is an error, not a crash.
enum LegacyXML {
    /// One element and what it contains.
    struct Element: Sendable {
        var name: String
        var attributes: [(name: String, value: String)]
        var children: [Node]
        /// Byte offset of the `<` that opens the element, for messages.
        var offset: Int

        /// The value of the attribute called `name`, if present.
        func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }

        /// The child elements, in order.
        var elements: [Element] {
            children.compactMap { if case .element(let element) = $0 { element } else { nil } }
        }
    }

    /// A child of an element.
    enum Node: Sendable {
        case element(Element)
        case text(String)
    }

    /// Parses `bytes` and returns the root element.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   with the line and column of the first problem.
    static func parse(_ bytes: [UInt8], file: String, maxDepth: Int = 256) throws -> Element {
        var reader = Reader(bytes: bytes, file: file, maxDepth: maxDepth)
        return try reader.document()
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var index = 0
        let end = min(offset, bytes.count)
        while index < end {
            let byte = bytes[index]
            if byte == 0x0A
                || (byte == 0x0D && (index + 1 >= bytes.count || bytes[index + 1] != 0x0A))
            {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 && byte != 0x0D {
                column += 1
            }
            index += 1
        }
        return (line, column)
    }

    /// A format error at byte `offset` of `bytes`.
    static func error(_ reason: String, at offset: Int, in bytes: [UInt8], file: String)
        -> PreferencesError
    {
        let (line, column) = position(of: offset, in: bytes)
        return .legacyFormat(file: file, line: line, column: column, reason: reason)
    }

    private struct Reader {
        let bytes: [UInt8]
        let file: String
        let maxDepth: Int
        var index = 0

        func error(_ reason: String, at offset: Int? = nil) -> PreferencesError {
            LegacyXML.error(reason, at: offset ?? index, in: bytes, file: file)
        }

        mutating func document() throws -> Element {
            try validateUTF8()
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
            try skipMisc(allowDoctype: true)
            guard index < bytes.count else {
                throw error(bytes.isEmpty ? "the file is empty" : "no root element")
            }
            guard bytes[index] == UInt8(ascii: "<") else {
                throw error("text before the root element")
            }
            let root = try element(depth: 1)
            try skipMisc(allowDoctype: false)
            if index < bytes.count { throw error("content after the root element") }
            return root
        }

        private func validateUTF8() throws {
            var lines = 0
            if let offset = PropertiesParser.firstInvalidUTF8(bytes, lines: &lines) {
                throw error("invalid UTF-8 at byte offset \(offset)", at: offset)
            }
        }

        private func starts(with text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let pointer = text.utf8Start
            for offset in 0..<count where bytes[index + offset] != pointer[offset] {
                return false
            }
            return true
        }

        private static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        private mutating func skipSpace() {
            while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
        }

        /// Skips white space, comments, processing instructions and (before
        /// the root) one document type declaration.
        private mutating func skipMisc(allowDoctype: Bool) throws {
            var doctypeSeen = false
            while true {
                skipSpace()
                if starts(with: "<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if starts(with: "<!--") {
                    try skip(past: "-->", what: "comment")
                } else if starts(with: "<!DOCTYPE") {
                    guard allowDoctype && !doctypeSeen else {
                        throw error("unexpected document type declaration")
                    }
                    doctypeSeen = true
                    try skipDoctype()
                } else {
                    return
                }
            }
        }

        private mutating func skip(past terminator: StaticString, what: String) throws {
            let start = index
            while index < bytes.count {
                if starts(with: terminator) {
                    index += terminator.utf8CodeUnitCount
                    return
                }
                index += 1
            }
            throw error("unterminated \(what)", at: start)
        }

        private mutating func skipDoctype() throws {
            let start = index
            var bracketDepth = 0
            var quote: UInt8? = nil
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == 0x22 || byte == 0x27 {
                    quote = byte
                } else if byte == UInt8(ascii: "[") {
                    bracketDepth += 1
                } else if byte == UInt8(ascii: "]") {
                    bracketDepth -= 1
                } else if byte == UInt8(ascii: ">") && bracketDepth <= 0 {
                    return
                }
            }
            throw error("unterminated document type declaration", at: start)
        }

        private static func isNameByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"),
                UInt8(ascii: "-"), UInt8(ascii: "."), 0x80...0xFF:
                true
            default: false
            }
        }

        private mutating func name(_ what: String) throws -> String {
            let start = index
            while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
            guard index > start else {
                if index >= bytes.count { throw error("unexpected end of file in \(what)") }
                throw error("expected \(what), found '\(describe(at: index))'")
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        private func describe(at offset: Int) -> String {
            guard offset < bytes.count else { return "end of file" }
            let length = PropertiesParser.decodeUTF8(bytes, at: offset)?.1 ?? 1
            return String(
                decoding: bytes[offset..<min(offset + length, bytes.count)], as: UTF8.self)
        }

        /// Reads one element; `index` is at its `<`.
        private mutating func element(depth: Int) throws -> Element {
            let start = index
            guard depth <= maxDepth else {
                throw error("elements nested deeper than \(maxDepth)")
            }
            index += 1
            let tag = try name("an element name")
            var element = Element(name: tag, attributes: [], children: [], offset: start)
            while true {
                let hadSpace = index < bytes.count && Self.isSpace(bytes[index])
                skipSpace()
                guard index < bytes.count else {
                    throw error("unexpected end of file in the <\(tag)> tag", at: start)
                }
                if bytes[index] == UInt8(ascii: "/") {
                    index += 1
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
                        throw error("expected '>' after '/' in <\(tag)>")
                    }
                    index += 1
                    return element
                }
                if bytes[index] == UInt8(ascii: ">") {
                    index += 1
                    break
                }
                guard hadSpace else {
                    throw error("expected white space before an attribute in <\(tag)>")
                }
                let attributeStart = index
                let attributeName = try name("an attribute name")
                skipSpace()
                guard index < bytes.count else {
                    throw error("unexpected end of file in the <\(tag)> tag", at: start)
                }
                guard bytes[index] == UInt8(ascii: "=") else {
                    throw error("expected '=' after attribute '\(attributeName)' in <\(tag)>")
                }
                index += 1
                skipSpace()
                let value = try attributeValue(tag: tag)
                if element.attribute(attributeName) != nil {
                    throw error(
                        "duplicate attribute '\(attributeName)' in <\(tag)>", at: attributeStart)
                }
                element.attributes.append((attributeName, value))
            }
            try content(of: &element, depth: depth)
            return element
        }

        private mutating func attributeValue(tag: String) throws -> String {
            guard index < bytes.count, bytes[index] == 0x22 || bytes[index] == 0x27 else {
                throw error("expected a quoted attribute value in <\(tag)>")
            }
            let quote = bytes[index]
            index += 1
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else {
                    throw error("unexpected end of file in an attribute value of <\(tag)>")
                }
                let byte = bytes[index]
                if byte == quote {
                    index += 1
                    return String(decoding: out, as: UTF8.self)
                }
                switch byte {
                case UInt8(ascii: "<"):
                    throw error("'<' in an attribute value of <\(tag)>")
                case UInt8(ascii: "&"):
                    try entity(into: &out)
                case 0x0D:
                    // XML attribute-value normalisation: a line end is one space.
                    index += 1
                    if index < bytes.count, bytes[index] == 0x0A { index += 1 }
                    out.append(0x20)
                case 0x0A, 0x09:
                    index += 1
                    out.append(0x20)
                default:
                    index += 1
                    out.append(byte)
                }
            }
        }

        /// Decodes the entity or character reference at `index` (at its `&`).
        private mutating func entity(into out: inout [UInt8]) throws {
            let start = index
            index += 1
            let nameStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
                guard index - nameStart < 16, Self.isNameByte(bytes[index]) || bytes[index] == 0x23
                else {
                    throw error("unterminated entity reference", at: start)
                }
                index += 1
            }
            guard index < bytes.count else {
                throw error("unterminated entity reference", at: start)
            }
            let text = String(decoding: bytes[nameStart..<index], as: UTF8.self)
            index += 1
            switch text {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                var value: UInt32? = nil
                if text.hasPrefix("#x") {
                    let digits = text.dropFirst(2)
                    value = digits.allSatisfy(\.isHexDigit) ? UInt32(digits, radix: 16) : nil
                } else if text.hasPrefix("#") {
                    let digits = text.dropFirst()
                    value = digits.allSatisfy { $0.isASCII && $0.isNumber } ? UInt32(digits) : nil
                } else {
                    throw error("unknown entity '&\(text);'", at: start)
                }
                guard let value, let scalar = Unicode.Scalar(value) else {
                    throw error("invalid character reference '&\(text);'", at: start)
                }
                out.append(contentsOf: String(Character(scalar)).utf8)
            }
        }

        /// Reads the children of `element` up to and including its end tag.
        private mutating func content(of element: inout Element, depth: Int) throws {
            var text: [UInt8] = []
            func flush() {
                if !text.isEmpty {
                    element.children.append(.text(String(decoding: text, as: UTF8.self)))
                    text.removeAll()
                }
            }
            while true {
                guard index < bytes.count else {
                    throw error("unexpected end of file: <\(element.name)> is not closed")
                }
                let byte = bytes[index]
                if byte == UInt8(ascii: "&") {
                    try entity(into: &text)
                } else if byte == 0x0D {
                    index += 1
                    if index < bytes.count, bytes[index] == 0x0A { index += 1 }
                    text.append(0x0A)
                } else if byte != UInt8(ascii: "<") {
                    index += 1
                    text.append(byte)
                } else if starts(with: "</") {
                    let tagStart = index
                    index += 2
                    let closing = try name("an end tag name")
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
                        throw error("expected '>' in the </\(closing)> tag")
                    }
                    guard closing == element.name else {
                        throw error(
                            "end tag </\(closing)> does not match <\(element.name)>", at: tagStart)
                    }
                    index += 1
                    flush()
                    return
                } else if starts(with: "<!--") {
                    try skip(past: "-->", what: "comment")
                } else if starts(with: "<![CDATA[") {
                    let start = index
                    index += 9
                    while !starts(with: "]]>") {
                        guard index < bytes.count else {
                            throw error("unterminated CDATA section", at: start)
                        }
                        if bytes[index] == 0x0D {
                            if index + 1 >= bytes.count || bytes[index + 1] != 0x0A {
                                text.append(0x0A)
                            }
                        } else {
                            text.append(bytes[index])
                        }
                        index += 1
                    }
                    index += 3
                } else if starts(with: "<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if starts(with: "<!") {
                    throw error("unexpected declaration inside <\(element.name)>")
                } else {
                    flush()
                    element.children.append(.element(try self.element(depth: depth + 1)))
                }
            }
        }
    }
}
