import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Checks files the store writes against `Schemas/preferences-file.schema.json`,
/// with a validator for the keywords the project's schemas use; a keyword it
/// does not implement is reported as a problem, never ignored.
@Suite(.scaledTimeLimit(minutes: 10)) struct SchemaTests {
    static var schemaURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(
                "Schemas/preferences-file.schema.json")
    }

    static func loadSchema() throws -> PreferenceValue {
        try JSONText.parse(Array(try Data(contentsOf: schemaURL)), source: schemaURL.path)
    }

    /// The keywords `validate` implements, and the annotations it may ignore.
    static let implementedKeywords: Set<String> = [
        "$ref", "const", "enum", "type", "minimum", "maximum", "minItems", "required",
        "properties", "additionalProperties", "propertyNames", "minLength", "maxLength", "pattern",
        "format",
        "items",
    ]
    static let annotations: Set<String> = ["$schema", "$id", "$defs", "title", "description"]

    /// Keywords anywhere in `schema` that `validate` does not implement, as
    /// JSON pointers: a schema using one cannot pass silently.
    static func unimplementedKeywords(_ schema: PreferenceValue, at pointer: String = "")
        -> [String]
    {
        guard case .object(let rules) = schema else { return [] }
        var found: [String] = []
        for (keyword, rule) in rules.sorted(by: { $0.key < $1.key }) {
            let here = "\(pointer)/\(keyword)"
            if !implementedKeywords.contains(keyword) && !annotations.contains(keyword) {
                found.append(here)
                continue
            }
            // Of the formats, only date-time is checked.
            if keyword == "format" && rule != .string("date-time") {
                found.append(here)
                continue
            }
            switch keyword {
            case "properties", "$defs":
                if case .object(let children) = rule {
                    for (name, child) in children.sorted(by: { $0.key < $1.key }) {
                        found += unimplementedKeywords(child, at: "\(here)/\(name)")
                    }
                }
            case "additionalProperties", "propertyNames", "items":
                found += unimplementedKeywords(rule, at: here)
            default:
                break
            }
        }
        return found
    }

    /// A number as a double, for minimum and maximum.
    static func number(_ value: PreferenceValue?) -> Double? {
        switch value {
        case .int(let number)?: Double(number)
        case .double(let number)?: number
        default: nil
        }
    }

    /// Problems with `value` against `schema` (empty when it conforms).
    static func validate(
        _ value: PreferenceValue, against schema: PreferenceValue, root: PreferenceValue,
        path: String = "$"
    ) -> [String] {
        guard case .object(let rules) = schema else { return [] }
        var problems: [String] = []
        if path == "$" {
            problems += unimplementedKeywords(root).map {
                "schema keyword \($0) is not implemented"
            }
        }
        if case .string(let reference)? = rules["$ref"], reference.hasPrefix("#/$defs/"),
            case .object(let definitions)? = {
                if case .object(let r) = root { return r["$defs"] } else { return nil }
            }(),
            let target = definitions[String(reference.dropFirst("#/$defs/".count))]
        {
            problems += validate(value, against: target, root: root, path: path)
        }
        if let constant = rules["const"], constant != value {
            problems.append("\(path): expected \(constant.jsonText)")
        }
        if let type = rules["type"] {
            let allowed: [String]
            switch type {
            case .string(let one): allowed = [one]
            case .array(let many):
                allowed = many.compactMap { if case .string(let s) = $0 { s } else { nil } }
            default: allowed = []
            }
            let actual: [String]
            switch value {
            case .null: actual = ["null"]
            case .bool: actual = ["boolean"]
            case .int: actual = ["integer", "number"]
            case .double: actual = ["number"]
            case .string: actual = ["string"]
            case .array: actual = ["array"]
            case .object: actual = ["object"]
            }
            if !actual.contains(where: allowed.contains) {
                problems.append("\(path): type \(actual[0]) not in \(allowed)")
            }
        }
        if case .array(let allowed)? = rules["enum"], !allowed.contains(value) {
            problems.append("\(path): \(value.jsonText) not in \(rules["enum"]!.jsonText)")
        }
        if let minimum = number(rules["minimum"]), let actual = number(value), actual < minimum {
            problems.append("\(path): below minimum \(minimum)")
        }
        if let maximum = number(rules["maximum"]), let actual = number(value), actual > maximum {
            problems.append("\(path): above maximum \(maximum)")
        }
        if case .int(let minimum)? = rules["minItems"], case .array(let items) = value,
            items.count < minimum
        {
            problems.append("\(path): fewer than \(minimum) items")
        }
        if case .string(let text) = value {
            problems += stringProblems(text, rules, path: path)
        }
        if let rule = rules["items"], case .array(let items) = value {
            for (index, item) in items.enumerated() {
                problems += validate(item, against: rule, root: root, path: "\(path)[\(index)]")
            }
        }
        guard case .object(let fields) = value else { return problems }
        if case .array(let required)? = rules["required"] {
            for case .string(let name) in required where fields[name] == nil {
                problems.append("\(path): missing \(name)")
            }
        }
        let properties: [String: PreferenceValue]
        if case .object(let declared)? = rules["properties"] {
            properties = declared
        } else {
            properties = [:]
        }
        for (name, field) in fields {
            if let rule = properties[name] {
                problems += validate(field, against: rule, root: root, path: "\(path).\(name)")
            } else if rules["additionalProperties"] == .bool(false) {
                problems.append("\(path): unexpected \(name)")
            } else if let rule = rules["additionalProperties"] {
                problems += validate(field, against: rule, root: root, path: "\(path).\(name)")
            }
            if case .object(let names)? = rules["propertyNames"] {
                problems += stringProblems(name, names, path: "\(path) key '\(name)'")
            }
        }
        return problems
    }

    /// minLength, maxLength (in characters, as JSON Schema counts) and pattern.
    static func stringProblems(_ text: String, _ rules: [String: PreferenceValue], path: String)
        -> [String]
    {
        var problems: [String] = []
        let length = text.unicodeScalars.count
        if case .int(let minimum)? = rules["minLength"], length < minimum {
            problems.append("\(path): shorter than \(minimum)")
        }
        if case .int(let maximum)? = rules["maxLength"], length > maximum {
            problems.append("\(path): longer than \(maximum)")
        }
        if case .string(let pattern)? = rules["pattern"] {
            do {
                let expression = try NSRegularExpression(pattern: pattern)
                let range = NSRange(text.startIndex..., in: text)
                if expression.firstMatch(in: text, range: range) == nil {
                    problems.append("\(path): does not match \(pattern)")
                }
            } catch {
                problems.append("\(path): pattern \(pattern) does not compile: \(error)")
            }
        }
        if case .string(let format)? = rules["format"] {
            switch format {
            case "date-time":
                if ISO8601.parse(text) == nil || !text.hasSuffix("Z") {
                    problems.append("\(path): not an ISO 8601 UTC date-time")
                }
            default:
                problems.append("\(path): format \(format) is not implemented")
            }
        }
        return problems
    }

    @Test func filesTheStoreWritesMatchTheSchema() async throws {
        let schema = try Self.loadSchema()
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, declaring: [PreferenceKeys.apiToken])
        try await store.edit { prefs in
            prefs[.darkMode] = true
            prefs[.mapZoom] = .infinity
            prefs[.when] = Date(timeIntervalSince1970: 0)
            prefs[.window] = Window(width: 1, height: 2, title: nil)
            prefs[.tags] = ["x"]
            prefs[raw: "nothing"] = .null
            prefs.version = 2
        }
        // Enough changes that older history entries move to the archive,
        // and a removal (an entry without a new value).
        for value in 0..<20 { try await store.set(.counter, value) }
        try await store.remove(.darkMode)
        // A secret (the member `secrets`, entries that record only that it
        // changed) and a temporary value (the member `temporary`).
        try await store.set(.apiToken, "s3cret")
        try await store.set(.language, "fr", for: .seconds(3600))
        let written = try TestJSON.parse(Array(try Data(contentsOf: url)))
        guard case .object(let members) = written else {
            Issue.record("the file is not an object")
            return
        }
        #expect(members["secrets"] == ["api_token"])
        #expect(members["temporary"] != nil)
        #expect(Self.validate(written, against: schema, root: schema) == [])
        // The archive's first line names the document's history; each line
        // after it is an entry as the schema describes it.
        let entry: PreferenceValue = ["$ref": "#/$defs/historyEntry"]
        let lines = try #require(contents(directory.file("prefs.json.history")))
            .split(separator: "\n")
        #expect(lines.count > 5)
        let identity = try TestJSON.parse(String(lines[0]))
        #expect(identity == ["history_id": try #require(members["history_id"])])
        for line in lines.dropFirst() {
            let value = try TestJSON.parse(String(line))
            #expect(Self.validate(value, against: entry, root: schema, path: "entry") == [])
        }
    }

    @Test(arguments: [
        #"{"format": 2, "values": {}}"#,
        #"{"format": 1}"#,
        #"{"format": 1, "values": {}, "version": -1}"#,
        #"{"format": 1, "values": {"": 1}}"#,
        #"{"format": 1, "values": [], "version": 0}"#,
        #"{"format": 1, "values": {"tab\u0009key": 1}}"#,
        #"{"format": 1, "values": {"k": 1}, "version": 1.5}"#,
        #"{"format": 1, "values": {}, "sequence": -1}"#,
    ])
    func theSchemaRejectsWhatTheStoreRejects(text: String) throws {
        let schema = try Self.loadSchema()
        let value = try PreferenceValue(jsonText: text)
        #expect(!Self.validate(value, against: schema, root: schema).isEmpty)
        #expect(throws: PreferencesError.self) {
            try StoreDocument.decode(Array(text.utf8), file: "f", limits: PreferencesLimits())
        }
    }
}
