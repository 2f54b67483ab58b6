/// Reads Android SharedPreferences XML files as AOSP's `XmlUtils.readMapXml`
/// does, but strictly: where Android would quietly start empty (an empty,
/// truncated or malformed file), this is an error.
///
/// `<boolean>`, `<int>`, `<long>`, `<float>`, `<double>`, `<string>`, `<set>`
/// (of strings, becoming a sorted array), `<null>` (the key is absent) and the
/// nested `<list>` and `<map>` the reader also accepts. String text is never
/// trimmed. Floats and doubles keep the decimal value their text denotes.
enum SharedPrefsParser {
    /// Parses `bytes`, whose root must be `<map>`.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   with the line and column of the element at fault.
    static func parse(_ bytes: [UInt8], file: String) throws -> [String: PreferenceValue] {
        let root = try LegacyXML.parse(bytes, file: file)
        let reader = Reader(bytes: bytes, file: file)
        guard root.name == "map" else {
            throw reader.error("the root element is <\(root.name)>, not <map>", root)
        }
        return try reader.map(root)
    }

    private struct Reader {
        let bytes: [UInt8]
        let file: String

        func error(_ reason: String, _ element: LegacyXML.Element) -> PreferencesError {
            LegacyXML.error(reason, at: element.offset, in: bytes, file: file)
        }

        /// The named children of a `<map>`; text between them is ignored, as
        /// Android ignores it.
        func map(_ element: LegacyXML.Element) throws -> [String: PreferenceValue] {
            var result: [String: PreferenceValue] = [:]
            for child in element.elements {
                guard let name = child.attribute("name") else {
                    throw error("<\(child.name)> has no name attribute", child)
                }
                // `<null>` makes the key absent, also over an earlier duplicate.
                result[name] = try value(child, name: name)
            }
            return result
        }

        /// The value of one element, or nil for `<null>`.
        func value(_ element: LegacyXML.Element, name: String?) throws -> PreferenceValue? {
            let label = name.map { "'\($0)'" } ?? "in a <set> or <list>"
            switch element.name {
            case "string":
                var text = ""
                for child in element.children {
                    switch child {
                    case .text(let part): text += part
                    case .element(let inner):
                        throw error("unexpected <\(inner.name)> inside <string> \(label)", inner)
                    }
                }
                return .string(text)
            case "boolean":
                try requireEmpty(element, label: label)
                let text = element.attribute("value") ?? ""
                return .bool(text.count == 4 && text.lowercased() == "true")
            case "int", "long":
                try requireEmpty(element, label: label)
                let is32 = element.name == "int"
                guard let text = element.attribute("value") else {
                    throw error("<\(element.name)> \(label) has no value attribute", element)
                }
                guard
                    let number = JavaNumbers.parseInteger(
                        text, min: is32 ? Int64(Int32.min) : Int64.min,
                        max: is32 ? Int64(Int32.max) : Int64.max)
                else {
                    throw error(
                        "<\(element.name)> \(label) has value '\(text)', which is not "
                            + (is32 ? "a 32-bit" : "a 64-bit") + " integer", element)
                }
                return .int(number)
            case "float", "double":
                try requireEmpty(element, label: label)
                guard let text = element.attribute("value") else {
                    throw error("<\(element.name)> \(label) has no value attribute", element)
                }
                guard var number = JavaNumbers.parseFloatingPoint(text) else {
                    throw error(
                        "<\(element.name)> \(label) has value '\(text)', which is not a number",
                        element)
                }
                if element.name == "float" {
                    // Out of float's range Java reads infinity or zero; within
                    // it, keep the decimal the text denotes, not its float.
                    let single = Float(number)
                    if single.isInfinite || (single == 0 && number != 0) { number = Double(single) }
                }
                return .double(number)
            case "null":
                try requireEmpty(element, label: label)
                return nil
            case "set":
                var strings = Set<String>()
                for child in element.elements {
                    guard child.name == "string",
                        case .string(let text)? = try value(child, name: nil)
                    else {
                        throw error("<set> \(label) holds <\(child.name)>, not <string>", child)
                    }
                    strings.insert(text)
                }
                return .array(strings.sorted().map { .string($0) })
            case "list":
                return .array(try element.elements.map { try value($0, name: nil) ?? .null })
            case "map":
                return .object(try map(element))
            default:
                throw error("unknown element <\(element.name)> \(label)", element)
            }
        }

        /// Android accepts nothing (not even white space) inside a
        /// `<boolean>`, `<int>`, `<long>`, `<float>`, `<double>` or `<null>`.
        private func requireEmpty(_ element: LegacyXML.Element, label: String) throws {
            guard let first = element.children.first else { return }
            switch first {
            case .element(let inner):
                throw error("unexpected <\(inner.name)> inside <\(element.name)> \(label)", inner)
            case .text:
                throw error("unexpected text inside <\(element.name)> \(label)", element)
            }
        }
    }
}
