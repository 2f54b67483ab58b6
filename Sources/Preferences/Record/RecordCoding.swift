/// Converts between a record and the stored values, applying the evolution
/// rules R2 and R5 (<doc:Records>).
///
/// Reading starts from the stored values over the encoded `Record()`
/// (top-level fields the file lacks take their `init()` values), then
/// decodes. When decoding reports a missing nested field, that field is
/// filled from the encoded defaults and decoding is retried, so nested
/// structs evolve like the record itself, while dictionaries keep exactly
/// the entries stored. When a field does not decode (wrong type, invalid
/// enum case), the failing part is replaced by its default, the problem is
/// noted with its coding path, and decoding is retried.
struct RecordCoding<Record: PreferencesRecord>: Sendable {
    /// The encoded `Record()`, by top-level field.
    let defaults: [String: PreferenceValue]

    /// A field that did not decode.
    struct Problem: Sendable {
        /// The top-level field (the key in the file).
        let field: String
        let problem: PreferencesProblem
    }

    init() {
        do {
            defaults = try Self.fields(of: Record())
        } catch {
            preconditionFailure("\(Record.self)() cannot be stored: \(ValueCoding.describe(error))")
        }
    }

    /// The record's top-level fields as stored values; fields that encode
    /// as nothing (or `null`) are absent.
    static func fields(of record: Record) throws -> [String: PreferenceValue] {
        guard case .object(let fields) = try ValueCoding.encode(record) else {
            preconditionFailure(
                "\(Record.self) must encode as a keyed container: each field is a key in the file (R1 in the Records article)"
            )
        }
        return fields.filter { $0.value != .null }
    }

    func fields(of record: Record) throws -> [String: PreferenceValue] {
        try Self.fields(of: record)
    }

    /// Decodes the record from stored values; never fails.
    func decode(_ values: [String: PreferenceValue]) -> (record: Record, problems: [Problem]) {
        var tree = PreferenceValue.object(defaults.merging(values) { _, stored in stored })
        var problems: [Problem] = []
        // Each round fills or replaces one part of the tree, so a handful of
        // rounds is usual; the bound only stops a Codable type that never settles.
        for _ in 0..<256 {
            do {
                return (try ValueCoding.decode(Record.self, from: tree), problems)
            } catch let error as DecodingError {
                if case .keyNotFound(let key, let context) = error,
                    let value = defaultValue(at: context.codingPath + [key])
                {
                    tree = tree.replacing(at: context.codingPath + [key], with: value)
                    continue
                }
                let path = Self.path(of: error)
                guard let field = path.first?.stringValue else { break }
                problems.append(
                    Problem(field: field, problem: problem(error, path: path, in: tree)))
                tree = repaired(tree, at: path)
            } catch {
                break
            }
        }
        return (Record(), problems)
    }

    /// The tree with the deepest part of `path` that has a default set to that
    /// default; without one, the top-level field is dropped.
    private func repaired(_ tree: PreferenceValue, at path: [any CodingKey]) -> PreferenceValue {
        for length in stride(from: path.count, through: 1, by: -1) {
            let prefix = Array(path.prefix(length))
            if let value = defaultValue(at: prefix) {
                return tree.replacing(at: prefix, with: value)
            }
        }
        guard case .object(var fields) = tree else { return tree }
        fields[path[0].stringValue] = nil
        return .object(fields)
    }

    private func defaultValue(at path: [any CodingKey]) -> PreferenceValue? {
        guard let first = path.first, let top = defaults[first.stringValue] else { return nil }
        return top.value(at: path.dropFirst())
    }

    private static func path(of error: DecodingError) -> [any CodingKey] {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            return context.codingPath
        case .keyNotFound(let key, let context):
            return context.codingPath + [key]
        @unknown default:
            return []
        }
    }

    private func problem(_ error: DecodingError, path: [any CodingKey], in tree: PreferenceValue)
        -> PreferencesProblem
    {
        let name = Self.dotted(path)
        let stored = tree.value(at: path[...])
        let found =
            switch stored {
            case nil: "nothing"
            case .null?: "null"
            case let value?: "\(value.typeDescription) \(value.jsonText.prefix(80))"
            }
        let message: String
        switch error {
        case .typeMismatch(let type, _), .valueNotFound(let type, _):
            message =
                PreferencesError.typeMismatch(key: name, expected: "\(type)", found: found)
                .description
        case .dataCorrupted(let context):
            message =
                "field '\(name)' holds \(found), which is not valid: \(context.debugDescription)"
        default:
            message = "field '\(name)': \(ValueCoding.describe(error))"
        }
        return PreferencesProblem(key: name, message: message + "; reading its default")
    }

    /// `window.width`, `servers[2].host`.
    static func dotted(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue,
                key.stringValue == "Index \(index)" || Int(key.stringValue) == index
            {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}

extension PreferenceValue {
    /// The value at a coding path (object fields by name, array items by index).
    fileprivate func value(at path: ArraySlice<any CodingKey>) -> PreferenceValue? {
        guard let key = path.first else { return self }
        switch self {
        case .object(let fields):
            return fields[key.stringValue]?.value(at: path.dropFirst())
        case .array(let items):
            guard let index = key.intValue, items.indices.contains(index) else { return nil }
            return items[index].value(at: path.dropFirst())
        default:
            return nil
        }
    }

    /// This value with the part at `path` set to `new`; unchanged where the path cannot be followed.
    fileprivate func replacing(at path: [any CodingKey], with new: PreferenceValue)
        -> PreferenceValue
    {
        replacing(at: path[...], with: new)
    }

    private func replacing(at path: ArraySlice<any CodingKey>, with new: PreferenceValue)
        -> PreferenceValue
    {
        guard let key = path.first else { return new }
        switch self {
        case .object(var fields):
            let inner = fields[key.stringValue] ?? .object([:])
            fields[key.stringValue] = inner.replacing(at: path.dropFirst(), with: new)
            return .object(fields)
        case .array(var items):
            guard let index = key.intValue, items.indices.contains(index) else { return self }
            items[index] = items[index].replacing(at: path.dropFirst(), with: new)
            return .array(items)
        default:
            return self
        }
    }
}
