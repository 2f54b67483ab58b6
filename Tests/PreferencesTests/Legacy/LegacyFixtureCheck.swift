import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Runs each legacy parser over a folder of real files with the values their
/// own platform reads from them (`<format>/<name>.expected.json`, in a tagged
/// notation such as `{"int": 42}`), and reports agreement per file.
///
/// Enabled only when `LEGACY_FIXTURES_DIR` names an existing folder, so the
/// ordinary test run never reads outside the repository;
/// `scripts/check-legacy-fixtures.sh` sets it.
@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyFixtureCheck {
    static let folder = ProcessInfo.processInfo.environment["LEGACY_FIXTURES_DIR"] ?? ""

    /// What the parser should do with a file.
    enum Expectation {
        case values([String: PreferenceValue])
        /// The platform reads it, but it holds something the import rules
        /// (M5, <doc:MigratingAtStartUp>) say we cannot store: we must reject
        /// it, naming this.
        case rejection(String)
    }

    struct Unrepresentable: Error { let what: String }

    @Test(
        .enabled(
            if: !folder.isEmpty,
            "opt-in: LEGACY_FIXTURES_DIR names no folder (scripts/check-legacy-fixtures.sh sets it)"
        ))
    func fixturesAgree() throws {
        let root = URL(fileURLWithPath: Self.folder)
        var agree = 0
        var rejectedByRule = 0
        var disagree: [String] = []
        func report(
            _ label: String, _ expectation: Expectation, _ parse: () throws -> LegacyContents
        ) {
            switch (expectation, Result(catching: parse)) {
            case (.values(let expected), .success(let contents)) where contents.values == expected:
                agree += 1
                print("fixture: agree     \(label)")
            case (.values(let expected), .success(let contents)):
                let keys = Set(expected.keys).union(contents.values.keys).sorted().filter {
                    expected[$0] != contents.values[$0]
                }
                let detail = keys.prefix(3).map {
                    "\($0): expected \(expected[$0]?.jsonText ?? "absent"), got \(contents.values[$0]?.jsonText ?? "absent")"
                }
                disagree.append(label)
                print("fixture: DISAGREE  \(label): \(detail.joined(separator: "; "))")
            case (.values, .failure(let error)):
                disagree.append(label)
                print("fixture: DISAGREE  \(label): we reject it: \(error)")
            case (.rejection(let what), .failure(let error)):
                agree += 1
                rejectedByRule += 1
                print("fixture: agree     \(label): rejected by rule (\(what)): \(error)")
            case (.rejection(let what), .success):
                disagree.append(label)
                print("fixture: DISAGREE  \(label): should be rejected (\(what)) but was read")
            }
        }

        for directoryName in ["properties", "shared_prefs", "shared-prefs", "plist", "json"] {
            let directory = root.appendingPathComponent(directoryName)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
            else {
                continue
            }
            for name in names.sorted() where !name.hasSuffix(".json") && !name.hasSuffix(".md") {
                let file = directory.appendingPathComponent(name)
                let expectedFile = file.deletingPathExtension().appendingPathExtension(
                    "expected.json")
                guard let data = FileManager.default.contents(atPath: expectedFile.path) else {
                    Issue.record("no expected values for \(directoryName)/\(name)")
                    continue
                }
                guard
                    case .object(let expected) = try JSONText.parse(
                        Array(data), source: expectedFile.path)
                else {
                    Issue.record("\(expectedFile.path) is not a JSON object")
                    continue
                }
                let label = "\(directoryName)/\(name)"
                switch directoryName {
                case "properties":
                    for (tag, encoding) in [
                        ("jdk17_load_Reader_UTF8", PropertiesEncoding.utf8),
                        ("jdk17_load_InputStream_ISO8859_1", .iso8859_1),
                    ] {
                        guard case .object(let values)? = expected[tag] else { continue }
                        report("\(label) [\(encoding.rawValue)]", .values(values)) {
                            try LegacyReader.read(.properties, at: file, encoding: encoding)
                        }
                    }
                case "plist":
                    report(label, Self.plistExpectation(expected["root"] ?? .null)) {
                        try LegacyReader.read(.plist, at: file)
                    }
                case "json":
                    report(label, .values(expected)) { try LegacyReader.read(.json, at: file) }
                default:
                    let values = try Self.sharedPrefsValues(expected["map"] ?? [:])
                    report(label, .values(values)) { try LegacyReader.read(.sharedPrefs, at: file) }
                }
            }
        }

        // The envdir fixtures have no expected.json: their .source.md states
        // what daemontools' envdir sets, repeated here.
        let envdirExpected: [String: [String: PreferenceValue]] = [
            "cyberusnetwork_tinydns_env": ["IP": "10.8.100.2", "ROOT": "/var/tinydns/root"],
            "otus_hw08_testdata_env": [
                "BAR": "bar", "EMPTY": "", "FOO": "   foo\nwith new line", "HELLO": "\"hello\"",
            ],
        ]
        let envdirs = root.appendingPathComponent("envdir")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: envdirs.path))?.sorted()
            ?? []
        where !name.hasSuffix(".md") {
            guard let expected = envdirExpected[name] else {
                Issue.record("no expected values for envdir/\(name)")
                continue
            }
            report("envdir/\(name)", .values(expected)) {
                try LegacyReader.read(.envdir, at: envdirs.appendingPathComponent(name))
            }
        }

        print(
            "fixture: summary: \(agree + disagree.count) checked, \(agree) agree "
                + "(\(rejectedByRule) of them rejected as the import rules require), "
                + "\(disagree.count) disagree")
        #expect(agree + disagree.count > 0, "no fixture was found in \(Self.folder)")
        #expect(disagree.isEmpty, "fixtures that disagree: \(disagree)")
    }

    // MARK: - The tagged notation

    static func plistExpectation(_ root: PreferenceValue) -> Expectation {
        do {
            guard case .object(let values) = try plistValue(root, path: "") else {
                return .rejection("the root is not a dictionary")
            }
            return .values(values)
        } catch let unrepresentable as Unrepresentable {
            return .rejection(unrepresentable.what)
        } catch {
            return .rejection("\(error)")
        }
    }

    static func plistValue(_ tagged: PreferenceValue, path: String) throws -> PreferenceValue {
        guard case .object(let fields) = tagged, fields.count == 1,
            let (tag, payload) = fields.first
        else {
            throw Unrepresentable(what: "untagged value at '\(path)'")
        }
        switch (tag, payload) {
        case ("dict", .object(let members)):
            var result: [String: PreferenceValue] = [:]
            for (key, value) in members {
                result[key] = try plistValue(value, path: path.isEmpty ? key : "\(path).\(key)")
            }
            return .object(result)
        case ("array", .array(let items)):
            return .array(try items.enumerated().map { try plistValue($1, path: "\(path)[\($0)]") })
        case ("int", .int(let number)): return .int(number)
        case ("int", _): throw Unrepresentable(what: "integer beyond Int64 at '\(path)'")
        case ("uid", _): throw Unrepresentable(what: "keyed-archive UID at '\(path)'")
        case ("real", .string(let text)): return .double(Double(text) ?? .nan)
        case ("bool", .bool(let flag)): return .bool(flag)
        case ("string", .string(let text)): return .string(text)
        case ("date_utc", .string(let text)): return .string(text)
        case ("data_hex", .string(let hex)): return .string(base64(fromHex: hex))
        default: throw Unrepresentable(what: "unknown tag '\(tag)' at '\(path)'")
        }
    }

    static func sharedPrefsValues(_ map: PreferenceValue) throws -> [String: PreferenceValue] {
        guard case .object(let fields) = map else { return [:] }
        var result: [String: PreferenceValue] = [:]
        for (key, tagged) in fields {
            guard case .object(let tagFields) = tagged, let (tag, payload) = tagFields.first else {
                continue
            }
            switch (tag, payload) {
            case ("int", _), ("long", _), ("boolean", _), ("string", _): result[key] = payload
            case ("float", .string(let text)), ("double", .string(let text)):
                result[key] = .double(Double(text) ?? .nan)
            case ("float", .double(let number)), ("double", .double(let number)):
                result[key] = .double(number)
            case ("set", .array(let items)):
                let strings = items.compactMap {
                    if case .string(let text) = $0 { text } else { nil }
                }
                result[key] = .array(strings.sorted().map { .string($0) })
            case ("map", _): result[key] = .object(try sharedPrefsValues(payload))
            case ("null", _): break
            default: result[key] = payload
            }
        }
        return result
    }

    static func base64(fromHex hex: String) -> String {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), next > index {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return Data(bytes).base64EncodedString()
    }
}
