import Preferences

/// Writes values as indented JSON in the store file's own layout: two
/// spaces, `" : "` between key and value, keys sorted by their UTF-8 bytes, as the
/// store file's writer sorts them (Sources/Preferences/Format/StoreDocument.swift).
enum PrettyJSON {
    static func text(_ value: PreferenceValue) -> String {
        var out = ""
        write(value, indent: 0, into: &out)
        return out
    }

    private static func write(_ value: PreferenceValue, indent: Int, into out: inout String) {
        let inner = String(repeating: "  ", count: indent + 1)
        switch value {
        case .array(let items) where !items.isEmpty:
            out += "["
            for (position, item) in items.enumerated() {
                out += (position == 0 ? "\n" : ",\n") + inner
                write(item, indent: indent + 1, into: &out)
            }
            out += "\n" + String(repeating: "  ", count: indent) + "]"
        case .object(let fields) where !fields.isEmpty:
            out += "{"
            for (position, key) in fields.keys.sortedByBytes().enumerated() {
                out += (position == 0 ? "\n" : ",\n") + inner
                out += PreferenceValue.string(key).jsonText + " : "
                write(fields[key] ?? .null, indent: indent + 1, into: &out)
            }
            out += "\n" + String(repeating: "  ", count: indent) + "}"
        default:
            out += value.jsonText
        }
    }
}
