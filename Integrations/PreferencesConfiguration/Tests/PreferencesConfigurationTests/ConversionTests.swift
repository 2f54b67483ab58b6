import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import Testing

/// Each conversion edge read through the provider beside the same JSON
/// read through swift-configuration's own JSON provider: the same value,
/// or an error from both.
@Suite struct ConversionTests {
    struct Case: Sendable, CustomStringConvertible {
        var json: String
        var type: ConfigType
        var description: String { "\(json) as \(type)" }
    }

    static let cases: [Case] = [
        // Integers as doubles: exact up to 2^53, refused where a Double would round.
        Case(json: "42", type: .double),
        Case(json: "9007199254740992", type: .double),
        Case(json: "9007199254740993", type: .double),
        Case(json: "-9007199254740993", type: .double),
        Case(json: "[1, 9007199254740993]", type: .doubleArray),
        // Doubles as integers: only without a fractional part.
        Case(json: "42.0", type: .int),
        Case(json: "42.5", type: .int),
        Case(json: "1e300", type: .int),
        Case(json: "[1.0, 2.0]", type: .intArray),
        Case(json: "[1.0, 2.5]", type: .intArray),
        // Bools as numbers and numbers as bools.
        Case(json: "true", type: .int),
        Case(json: "false", type: .double),
        Case(json: "0", type: .bool),
        Case(json: "7", type: .bool),
        Case(json: "0.5", type: .bool),
        Case(json: "[true, false]", type: .intArray),
        Case(json: "[1, 0]", type: .boolArray),
        // What no number reads as.
        Case(json: "true", type: .string),
        Case(json: "42", type: .string),
        Case(json: #""42""#, type: .int),
        Case(json: #""true""#, type: .bool),
    ]

    @Test(arguments: cases)
    func theProviderConvertsAsTheJSONProviderDoes(_ edge: Case) async throws {
        let directory = try TemporaryDirectory()
        let ours = try await providerResult(for: edge, in: directory)
        let theirs = try await jsonProviderResult(for: edge, in: directory)
        #expect(ours == theirs)
    }

    /// Where the store has a value JSON cannot write, the provider reads it
    /// and the JSON provider has nothing to compare: the file format's
    /// spellings of the non-finite numbers read as doubles.
    @Test func theStoresSpellingsOfNonFiniteNumbersReadAsDoubles() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit {
            $0[raw: "nan"] = "NaN"
            $0[raw: "up"] = "Infinity"
            $0[raw: "down"] = "-Infinity"
        }
        let provider = PreferencesProvider(store: store)
        let nan = try provider.value(forKey: "nan", type: .double).value?.content
        guard case .double(let number)? = nan else {
            Issue.record("NaN read as \(String(describing: nan))")
            return
        }
        #expect(number.isNaN)
        #expect(
            try provider.value(forKey: "up", type: .double).value?.content == .double(.infinity))
        #expect(
            try provider.value(forKey: "down", type: .double).value?.content == .double(-.infinity))
        // As a string, each is the text stored.
        #expect(try provider.value(forKey: "nan", type: .string).value?.content == .string("NaN"))
    }

    /// What a read returned, as text: the content, or "error".
    private func providerResult(for edge: Case, in directory: TemporaryDirectory) async throws
        -> String
    {
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let stored = try PreferenceValue(jsonText: edge.json)
        try await store.edit { $0[raw: "edge"] = stored }
        return describe {
            try PreferencesProvider(store: store).value(forKey: "edge", type: edge.type)
        }
    }

    private func jsonProviderResult(for edge: Case, in directory: TemporaryDirectory) async throws
        -> String
    {
        let file = directory.file("config.json")
        try Data(#"{"edge": \#(edge.json)}"#.utf8).write(to: file)
        let provider = try await FileProvider<JSONSnapshot>(
            config: ConfigReader(
                provider: InMemoryProvider(values: [
                    "filePath": ConfigValue(.string(file.path), isSecret: false)
                ])))
        return describe { try provider.value(forKey: "edge", type: edge.type) }
    }

    private func describe(_ read: () throws -> LookupResult) -> String {
        do {
            return try read().value.map { "\($0.content)" } ?? "nothing"
        } catch {
            return "error"
        }
    }
}
