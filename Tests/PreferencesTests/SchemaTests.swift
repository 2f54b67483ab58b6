import Foundation
import Testing

@testable import Preferences

/// Checks files the store writes against `Schemas/preferences-file.schema.json`,
/// with a validator for the keywords that schema uses.
@Suite struct SchemaTests {
    static var schemaURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(
                "Schemas/preferences-file.schema.json")
    }

    static func loadSchema() throws -> PreferenceValue {
        try JSONText.parse(Array(try Data(contentsOf: schemaURL)), source: schemaURL.path)
    }

    /// Problems with `value` against `schema` (empty when it conforms).
    static func validate(
        _ value: PreferenceValue, against schema: PreferenceValue, root: PreferenceValue,
        path: String = "$"
    ) -> [String] {
        guard case .object(let rules) = schema else { return [] }
        var problems: [String] = []
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
        if case .int(let minimum)? = rules["minimum"], case .int(let number) = value,
            number < minimum
        {
            problems.append("\(path): below minimum \(minimum)")
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
                if case .int(let minimum)? = names["minLength"], name.count < minimum {
                    problems.append("\(path): key '\(name)' too short")
                }
                if case .int(let maximum)? = names["maxLength"], name.count > maximum {
                    problems.append("\(path): key too long")
                }
            }
        }
        return problems
    }

    @Test func filesTheStoreWritesMatchTheSchema() async throws {
        let schema = try Self.loadSchema()
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.edit { prefs in
            prefs[.darkMode] = true
            prefs[.mapZoom] = .infinity
            prefs[.when] = Date(timeIntervalSince1970: 0)
            prefs[.window] = Window(width: 1, height: 2, title: nil)
            prefs[.tags] = ["x"]
            prefs[raw: "nothing"] = .null
            prefs.version = 2
        }
        let written = try JSONText.parse(Array(try Data(contentsOf: url)), source: url.path)
        #expect(Self.validate(written, against: schema, root: schema) == [])
    }

    @Test(arguments: [
        #"{"format": 2, "values": {}}"#,
        #"{"format": 1}"#,
        #"{"format": 1, "values": {}, "version": -1}"#,
        #"{"format": 1, "values": {"": 1}}"#,
        #"{"format": 1, "values": [], "version": 0}"#,
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
