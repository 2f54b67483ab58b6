import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// One conversion table: the same legacy value becomes the same typed value,
/// or the same refusal, through a migration (types by name, and typed keys)
/// and through `prefs import` with a key manifest ("Accepted spellings" in
/// Sources/Preferences/Preferences.docc/MigratingAtStartUp.md).
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIImportConversionTests {
    enum Expected: Sendable {
        case stored(PreferenceValue)
        /// No value: the key is not imported, and a stored value stays.
        case absent
        case refused
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let type: PreferenceValueType
        let source: PreferenceValue
        let expected: Expected
        init(_ type: PreferenceValueType, _ source: PreferenceValue, _ expected: Expected) {
            (self.type, self.source, self.expected) = (type, source, expected)
        }
        var testDescription: String { "\(source.jsonText) as \(type)" }
    }

    static let rows: [Row] = [
        Row(.bool, "true", .stored(true)), Row(.bool, " TRUE ", .stored(true)),
        Row(.bool, "Yes", .stored(true)), Row(.bool, "no", .stored(false)),
        Row(.bool, "on", .stored(true)), Row(.bool, "OFF", .stored(false)),
        Row(.bool, "1", .stored(true)), Row(.bool, "0", .stored(false)),
        Row(.bool, true, .stored(true)), Row(.bool, 1, .stored(true)),
        Row(.bool, 0, .stored(false)),
        Row(.bool, "maybe", .refused), Row(.bool, "y", .refused), Row(.bool, "", .refused),
        Row(.bool, 2, .refused), Row(.bool, [true], .refused), Row(.bool, .null, .absent),

        Row(.int, "42", .stored(42)), Row(.int, " 7\t", .stored(7)), Row(.int, "+5", .stored(5)),
        Row(.int, "-3", .stored(-3)), Row(.int, "007", .stored(7)), Row(.int, "3.0", .stored(3)),
        Row(.int, "1e3", .stored(1000)), Row(.int, 3.0, .stored(3)), Row(.int, 12, .stored(12)),
        Row(.int, "3.5", .refused), Row(.int, "0x10", .refused), Row(.int, "1_000", .refused),
        Row(.int, "1,000", .refused), Row(.int, "99999999999999999999", .refused),
        Row(.int, "ten", .refused), Row(.int, 2.5, .refused), Row(.int, true, .refused),
        Row(.int, .null, .absent),

        Row(.double, "14.5", .stored(14.5)), Row(.double, " -2.5 ", .stored(-2.5)),
        Row(.double, "+2", .stored(2.0)), Row(.double, ".5", .stored(0.5)),
        Row(.double, "5.", .stored(5.0)), Row(.double, "1e3", .stored(1000.0)),
        Row(.double, "1E-3", .stored(0.001)), Row(.double, 7, .stored(7.0)),
        Row(.double, 1.5, .stored(1.5)), Row(.double, "NaN", .stored("NaN")),
        Row(.double, "Infinity", .stored("Infinity")),
        Row(.double, "-Infinity", .stored("-Infinity")),
        Row(.double, "inf", .refused), Row(.double, "nan", .refused),
        Row(.double, "0x1p3", .refused),
        Row(.double, "1e400", .refused), Row(.double, "", .refused), Row(.double, false, .refused),
        Row(.double, .null, .absent),

        Row(.string, " padded ", .stored(" padded ")), Row(.string, "", .stored("")),
        Row(.string, 42, .stored("42")), Row(.string, 14.5, .stored("14.5")),
        Row(.string, true, .stored("true")), Row(.string, [1], .refused),
        Row(.string, ["a": 1], .refused), Row(.string, .null, .absent),

        Row(.json, "[1, 2]", .stored([1, 2])), Row(.json, #"{"a": 1}"#, .stored(["a": 1])),
        Row(.json, "12", .stored(12)), Row(.json, #""text""#, .stored("text")),
        Row(.json, [1], .stored([1])), Row(.json, "hello", .refused), Row(.json, "null", .absent),

        Row(.date, "2026-01-31T10:30:00+01:00", .stored("2026-01-31T09:30:00Z")),
        Row(.date, " 2026-01-31T09:30:00Z ", .stored("2026-01-31T09:30:00Z")),
        Row(.date, "2026-01-31", .stored("2026-01-31T00:00:00Z")),
        Row(.date, "yesterday", .refused), Row(.date, 5, .refused),

        Row(.data, "AAEC", .stored("AAEC")), Row(.data, " AAEC\n", .stored("AAEC")),
        Row(.data, "%%%", .refused), Row(.data, 1, .refused),
    ]

    /// Each type as an error names it, written out.
    static let typeNames: [PreferenceValueType: String] = [
        .bool: "Bool", .int: "Int", .double: "Double", .string: "String", .json: "JSON",
        .date: "Date", .data: "Data",
    ]

    static var refusedRows: [Row] {
        rows.filter { if case .refused = $0.expected { true } else { false } }
    }

    /// A typed key of the row's type, as an app declares it (nil for
    /// `json`, which no one Swift type stands for).
    static func typedKey(_ name: String, _ type: PreferenceValueType) -> PreferenceKeys? {
        switch type {
        case .bool: PreferenceKey<Bool>(name, default: false)
        case .int: PreferenceKey<Int>(name, default: 0)
        case .double: PreferenceKey<Double>(name, default: 0)
        case .string: PreferenceKey<String>(name, default: "")
        case .date: PreferenceKey<Date>(name, default: Date(timeIntervalSince1970: 0))
        case .data: PreferenceKey<Data>(name, default: Data())
        case .json: nil
        }
    }

    /// The three ways of importing `source` (a JSON legacy file) whose keys
    /// are declared with `types`, into a store holding `stored`, with
    /// `--overwrite` or `conflicts: .overwrite`: `prefs import` with a
    /// manifest of the types, and migrations typed by name and by typed
    /// keys. Each returns the stored values, or the error's one line.
    static func importEverywhere(
        _ source: [String: PreferenceValue], types: [String: PreferenceValueType],
        stored: [String: PreferenceValue], in workspace: CLIWorkspace
    ) async throws -> [String: Result<[String: PreferenceValue], Failure>] {
        let manifest = workspace.file("keys.json")
        try write(
            PreferencesManifest(entries: types.mapValues { .init(type: $0) }).jsonText,
            to: manifest)
        let byName = KeyTypes(types.mapValues { ValueConversion($0) })
        let typedKeys = types.compactMap { typedKey($0.key, $0.value) }
        let json = types.filter { $0.value == .json }.mapValues { ValueConversion($0) }
        let byKeys = KeyTypes(typedKeys).merging(KeyTypes(json))
        var results: [String: Result<[String: PreferenceValue], Failure>] = [:]
        for path in ["prefs import", "migration, types by name", "migration, typed keys"] {
            let store = workspace.file("\(path.filter(\.isLetter)).json")
            let legacy = workspace.file("\(path.filter(\.isLetter))-legacy.json")
            try write(PreferenceValue.object(source).jsonText, to: legacy)
            try await PreferencesStore(fileURL: store).edit { prefs in
                for (key, value) in stored { prefs[raw: key] = value }
            }
            let before = contents(store)
            let failure: Failure?
            if path == "prefs import" {
                let output = try await runChild(
                    "prefs",
                    [
                        "--file", store.path, "--manifest", manifest.path, "import", legacy.path,
                        "--format", "json", "--overwrite",
                    ])
                failure = output.status == 0 ? nil : Failure(output, legacy: legacy)
            } else {
                let types = path.hasSuffix("by name") ? byName : byKeys
                do {
                    _ = try await PreferencesStore(
                        fileURL: store,
                        migrations: [
                            LegacyImport(.json, at: legacy, types: types, conflicts: .overwrite)
                        ])
                    failure = nil
                } catch let error as PreferencesError {
                    failure = Failure(error, legacy: legacy)
                }
            }
            if let failure {
                #expect(contents(store) == before, "\(path) changed the store")
                #expect(contents(legacy) != nil, "\(path) moved the legacy file")
                results[path] = .failure(failure)
            } else {
                results[path] = .success(try await PreferencesStore(fileURL: store).snapshot.values)
            }
        }
        return results
    }

    /// A refusal as the user reads it: for `prefs import` its status and
    /// its one line with the file's name replaced, for a migration its
    /// error's description likewise.
    struct Failure: Error, Equatable {
        let status: Int32
        let message: String

        init(_ output: ProcessOutput, legacy: URL) {
            status = output.status
            message = output.standardError.replacingOccurrences(of: legacy.path, with: "FILE")
        }

        init(_ error: PreferencesError, legacy: URL) {
            // The status `prefs import` gives what a migration refuses.
            status = 3
            let line = "prefs: error: \(error.description)\n"
            message = line.replacingOccurrences(of: legacy.path, with: "FILE")
        }
    }

    @Test func everyAcceptedSpellingBecomesTheSameValueThroughAMigrationAndPrefsImport()
        async throws
    {
        let workspace = try CLIWorkspace()
        var source: [String: PreferenceValue] = [:]
        var types: [String: PreferenceValueType] = [:]
        var stored: [String: PreferenceValue] = [:]
        var expected: [String: PreferenceValue] = [:]
        for (index, row) in Self.rows.enumerated() {
            let key = "k\(index)"
            switch row.expected {
            case .refused: continue
            case .stored(let value): expected[key] = value
            case .absent:
                // A stored value stays, even with --overwrite.
                stored[key] = "kept"
                expected[key] = "kept"
            }
            source[key] = row.source
            types[key] = row.type
        }
        let results = try await Self.importEverywhere(
            source, types: types, stored: stored, in: workspace)
        #expect(results.count == 3)
        for (path, result) in results {
            let values = try result.get()
            for (index, row) in Self.rows.enumerated()
            where values["k\(index)"] != expected["k\(index)"] {
                Issue.record(
                    "\(path): \(row.testDescription) gave \(values["k\(index)"]?.jsonText ?? "nothing"), not \(expected["k\(index)"]?.jsonText ?? "nothing")"
                )
            }
            #expect(values.count == expected.count, "\(path)")
        }
    }

    @Test(arguments: refusedRows)
    func aRefusedSpellingIsRefusedAlikeByAMigrationAndPrefsImport(row: Row) async throws {
        let workspace = try CLIWorkspace()
        let results = try await Self.importEverywhere(
            ["other": "x", "value": row.source], types: ["value": row.type],
            stored: ["kept": 1], in: workspace)
        let failures = results.mapValues { result -> Failure? in
            if case .failure(let failure) = result { failure } else { nil }
        }
        let cli = try #require(failures["prefs import"] ?? nil, "prefs import accepted it")
        #expect(cli.status == 3)
        #expect(
            cli.message
                == "prefs: error: FILE: key 'value' holds \(row.source.jsonText), which is not a valid \(Self.typeNames[row.type]!)\n"
        )
        #expect(failures.values.allSatisfy { $0 == cli }, "\(failures)")
    }

    @Test func aKeyTheStoreCannotHoldIsRefusedAlike() async throws {
        let workspace = try CLIWorkspace()
        let results = try await Self.importEverywhere(
            ["fine": "x", "bad\u{1}key": "y"], types: [:], stored: [:], in: workspace)
        let failures = results.values.compactMap { result -> Failure? in
            if case .failure(let failure) = result { failure } else { nil }
        }
        #expect(failures.count == 3)
        #expect(failures.allSatisfy { $0 == failures[0] })
        let failure = try #require(failures.first)
        #expect(failure.status == 3)
        #expect(failure.message.hasPrefix("prefs: error: FILE: key 'bad"))
        #expect(failure.message.contains("key' cannot be stored: "))
        #expect(failure.message.filter(\.isNewline).count == 1)
    }

    @Test func aRefusedSecretValueIsRedacted() async throws {
        let workspace = try CLIWorkspace()
        let manifest = workspace.file("keys.json")
        try write(#"{"keys": {"api_token": {"type": "int", "secret": true}}}"#, to: manifest)
        let legacy = workspace.file("app.properties")
        try write("api_token=hunter2\n", to: legacy)
        let output = try await workspace.prefs(
            "--manifest", manifest.path, "import", legacy.path, "--format", "properties")
        #expect(output.status == 3)
        #expect(
            output.standardError
                == "prefs: error: \(legacy.path): key 'api_token' holds <redacted>, which is not a valid Int\n"
        )
    }
}
