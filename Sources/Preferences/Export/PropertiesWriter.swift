/// Writes values as a Java properties file that `Properties.load` (and
/// `prefs import --format properties`, in either encoding) reads back
/// (``PreferencesExport/Format/properties``).
///
/// Escaping follows `Properties.store`: `\`, `=`, `:`, `#` and `!` get a
/// backslash; tab, newline, carriage return and form feed become `\t`,
/// `\n`, `\r`, `\f`; spaces are escaped everywhere in a key and at the start
/// of a value; every other character outside printable ASCII becomes
/// `\uXXXX` (UTF-16 units), so the file is plain ASCII. Strings are written
/// as they are; other values as compact JSON text.
enum PropertiesWriter {
    static func text(_ values: [String: PreferenceValue]) -> String {
        var out = ""
        for key in values.keys.sorted(by: JSONText.precedesByBytes) {
            let value: String
            switch values[key] {
            case .string(let text): value = text
            case let other?: value = other.jsonText
            case nil: continue
            }
            out += escape(key, isKey: true) + "=" + escape(value, isKey: false) + "\n"
        }
        return out
    }

    static func escape(_ text: String, isKey: Bool) -> String {
        var out = ""
        for (offset, unit) in text.utf16.enumerated() {
            switch unit {
            case 0x20: out += (isKey || offset == 0) ? "\\ " : " "
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x0C: out += "\\f"
            case 0x5C: out += "\\\\"
            case 0x3D, 0x3A, 0x23, 0x21: out += "\\" + String(UnicodeScalar(UInt8(unit)))
            case 0x21...0x7E: out.unicodeScalars.append(UnicodeScalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }
}
