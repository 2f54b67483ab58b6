import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// The schema checks cannot pass by ignoring a rule: a keyword the test
/// validator does not implement is a problem, and the key-manifest schema
/// rejects what the manifest reader rejects.
@Suite(.scaledTimeLimit(minutes: 10)) struct SchemaStrictnessTests {
    static func schema(_ name: String) throws -> PreferenceValue {
        let url = ManifestTests.schemasURL.appendingPathComponent(name)
        return try TestJSON.parse(Array(try Data(contentsOf: url)))
    }

    @Test(arguments: ["preferences-file.schema.json", "key-manifest.schema.json"])
    func everyKeywordOfTheSchemasIsImplemented(_ name: String) throws {
        let schema = try Self.schema(name)
        #expect(SchemaTests.unimplementedKeywords(schema) == [])
    }

    @Test(arguments: [
        #"{"multipleOf": 2}"#,
        #"{"properties": {"a": {"pattern": "x", "format": "email"}}}"#,
        #"{"uniqueItems": true}"#,
        #"{"items": {"prefixItems": []}}"#,
        #"{"$defs": {"d": {"oneOf": []}}}"#,
    ])
    func aKeywordTheValidatorDoesNotImplementIsAProblem(_ text: String) throws {
        let schema = try PreferenceValue(jsonText: text)
        // Whatever the value, the check must not pass silently.
        for value: PreferenceValue in ["abcdef", ["a": "b"], [1], 1] {
            #expect(!SchemaTests.validate(value, against: schema, root: schema).isEmpty)
        }
    }

    @Test func itemsAreCheckedOneByOne() throws {
        let schema = try PreferenceValue(jsonText: #"{"items": {"type": "integer"}}"#)
        #expect(SchemaTests.validate([1, 2], against: schema, root: schema) == [])
        #expect(
            SchemaTests.validate([1, "two"], against: schema, root: schema)
                == ["$[1]: type string not in [\"integer\"]"])
    }

    static let badManifests: [String] = [
        #"{}"#,
        #"{"keys": []}"#,
        #"{"keys": {}, "extra": 1}"#,
        #"{"format": 2, "keys": {}}"#,
        #"{"keys": {"a": {}}}"#,
        #"{"keys": {"a": {"type": "float"}}}"#,
        #"{"keys": {"a": {"type": 1}}}"#,
        #"{"keys": {"a": {"type": "int", "colour": "red"}}}"#,
        #"{"keys": {"a": {"type": "int", "minimum": "1"}}}"#,
        #"{"keys": {"a": {"type": "int", "maximum": true}}}"#,
        #"{"keys": {"a": {"type": "string", "enum": []}}}"#,
        #"{"keys": {"a": {"type": "string", "enum": "de"}}}"#,
        #"{"keys": {"a": {"type": "bool", "description": 5}}}"#,
        #"{"keys": {"": {"type": "bool"}}}"#,
    ]

    @Test(arguments: badManifests) func theManifestSchemaRejects(_ text: String) throws {
        let schema = try Self.schema("key-manifest.schema.json")
        let value = try PreferenceValue(jsonText: text)
        #expect(!SchemaTests.validate(value, against: schema, root: schema).isEmpty)
    }

    @Test(arguments: badManifests) func theManifestReaderRejectsTheSame(_ text: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("keys.json")
        try write(text, to: url)
        #expect(throws: PreferencesError.self) { try PreferencesManifest.load(from: url) }
    }

    @Test func aGoodManifestPasses() throws {
        let schema = try Self.schema("key-manifest.schema.json")
        let value = try PreferenceValue(
            jsonText: #"""
                {"format": 1, "description": "d", "keys": {
                  "zoom": {"type": "double", "default": 14, "minimum": 1, "maximum": 20.5},
                  "language": {"type": "string", "enum": ["de", "fr"], "description": "x"}}}
                """#)
        #expect(SchemaTests.validate(value, against: schema, root: schema) == [])
    }
}
