/// Writes values as an XML property list whose root is a dictionary.
///
/// Booleans, integers, numbers, strings, arrays and objects map to their
/// plist elements. A property list has no null: null values (at any depth)
/// are left out and named in `omitted`. Dates and data are already strings
/// in the store, so they stay strings. Characters XML 1.0 cannot carry
/// (control characters other than tab, newline and carriage return) make
/// the export fail rather than write a file no reader accepts
/// (``PreferencesExport/Format/plist``).
struct PropertyListWriter {
    private(set) var omitted: [String] = []
    private var out = ""

    static func text(_ values: [String: PreferenceValue]) throws(PreferencesError) -> (
        text: String, omitted: [String]
    ) {
        var writer = PropertyListWriter()
        writer.out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        try writer.write(.object(values), path: "", depth: 0)
        writer.out += "</plist>\n"
        return (writer.out, writer.omitted)
    }

    private mutating func write(_ value: PreferenceValue, path: String, depth: Int)
        throws(PreferencesError)
    {
        let indent = String(repeating: "\t", count: depth)
        switch value {
        case .null:
            omitted.append(path)
        case .bool(let flag):
            out += indent + (flag ? "<true/>" : "<false/>") + "\n"
        case .int(let number):
            out += indent + "<integer>\(number)</integer>\n"
        case .double(let number):
            let text =
                number.isNaN
                ? "nan" : number.isInfinite ? (number > 0 ? "+infinity" : "-infinity") : "\(number)"
            out += indent + "<real>\(text)</real>\n"
        case .string(let text):
            out += indent + "<string>\(try escape(text, path: path))</string>\n"
        case .array(let items):
            out += indent + "<array>\n"
            for (index, item) in items.enumerated() {
                try write(item, path: "\(path)[\(index)]", depth: depth + 1)
            }
            out += indent + "</array>\n"
        case .object(let fields):
            out += indent + "<dict>\n"
            for key in fields.keys.sorted(by: JSONText.precedesByBytes) {
                let child = path.isEmpty ? key : "\(path).\(key)"
                guard let field = fields[key], field != .null else {
                    omitted.append(child)
                    continue
                }
                out += indent + "\t<key>\(try escape(key, path: child))</key>\n"
                try write(field, path: child, depth: depth + 1)
            }
            out += indent + "</dict>\n"
        }
    }

    private func escape(_ text: String, path: String) throws(PreferencesError) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            // An XML reader turns a raw carriage return into a newline.
            case "\r": escaped += "&#13;"
            case "\t", "\n": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                let code = String(scalar.value, radix: 16, uppercase: true)
                throw .invalidValue(
                    key: path,
                    reason:
                        "holds control character U+\(code), which an XML property list cannot carry"
                )
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
