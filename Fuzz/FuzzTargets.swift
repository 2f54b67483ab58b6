// The fuzz targets: each one feeds arbitrary bytes to one decoder and accepts
// only its documented errors. Anything else (a crash, a trap, another error
// type, a hang or a leak) is a finding that libFuzzer reports.
//
// Built by scripts/fuzz.sh together with the library sources as one module,
// so the parsers' internal entry points are reachable without @testable.

/// A fuzz target: a name (as `scripts/fuzz.sh` spells it) and what to run on one input.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void

    static let all: [FuzzTarget] = [
        FuzzTarget(name: "store-decoder") { bytes in
            expectOnly(corrupted: true) {
                _ = try StoreDocument.decode(bytes, file: "fuzz.json", limits: PreferencesLimits())
            }
        },
        FuzzTarget(name: "json-text") { bytes in
            expectOnly(corrupted: true) {
                let value = try JSONText.parse(bytes, source: "fuzz.json", maxDepth: 64)
                // What was read must write back and read again as the same value.
                let again = try JSONText.parse(
                    JSONText.encodeBytes(value, pretty: true), source: "again", maxDepth: 64)
                if !sameValue(value, again) {
                    fatalError("round trip changed \(value) into \(again)")
                }
            }
        },
        FuzzTarget(name: "properties-utf8") { bytes in
            expectOnly(legacy: true) {
                _ = try PropertiesParser.parse(bytes, encoding: .utf8, file: "fuzz.properties")
            }
        },
        FuzzTarget(name: "properties-latin1") { bytes in
            expectOnly(legacy: true) {
                _ = try PropertiesParser.parse(bytes, encoding: .iso8859_1, file: "fuzz.properties")
            }
        },
        FuzzTarget(name: "shared-prefs") { bytes in
            expectOnly(legacy: true) { _ = try SharedPrefsParser.parse(bytes, file: "fuzz.xml") }
        },
        FuzzTarget(name: "plist-xml") { bytes in
            // Never starts with the binary magic, so the XML reader gets every input.
            guard !bytes.starts(with: Array("bplist".utf8)) else { return }
            expectOnly(legacy: true) { _ = try PropertyListParser.parse(bytes, file: "fuzz.plist") }
        },
        FuzzTarget(name: "plist-binary") { bytes in
            // Always the binary reader: the input follows the magic and version.
            expectOnly(legacy: true) {
                _ = try PropertyListParser.parse(Array("bplist00".utf8) + bytes, file: "fuzz.plist")
            }
        },
        FuzzTarget(name: "envdir") { bytes in
            expectOnly(legacy: true) {
                _ = try EnvdirParser.parse(envdirEntries(bytes), directory: "/fuzz/env")
            }
        },
        FuzzTarget(name: "json-values") { bytes in
            expectOnly(legacy: true) { _ = try JSONValuesParser.parse(bytes, file: "fuzz.json") }
        },
    ]
}

/// Runs `body`; the only error allowed is the decoder's documented one.
func expectOnly(corrupted: Bool = false, legacy: Bool = false, _ body: () throws -> Void) {
    do {
        try body()
    } catch let error as PreferencesError {
        switch error {
        case .corrupted where corrupted: return
        case .legacyFormat where legacy: return
        default: fatalError("undocumented error: \(error)")
        }
    } catch {
        fatalError("undocumented error: \(error)")
    }
}

/// Equality that treats NaN as equal to itself (a parsed value never holds NaN,
/// but the check must not report one as a finding if it ever did).
func sameValue(_ left: PreferenceValue, _ right: PreferenceValue) -> Bool {
    left == right || left.jsonText == right.jsonText
}

/// Splits bytes into directory entries: records separated by 0x1E, each
/// `kind-byte name 0x1F contents` (kind 0 regular, 1 directory, 2 other).
func envdirEntries(_ bytes: [UInt8]) -> [EnvdirParser.Entry] {
    bytes.split(separator: 0x1E, omittingEmptySubsequences: true).map { record in
        let kind: EnvdirParser.Entry.Kind
        switch record.first.map({ $0 % 3 }) {
        case 1: kind = .directory
        case 2: kind = .other
        default: kind = .regular
        }
        let body = record.dropFirst()
        let separator = body.firstIndex(of: 0x1F) ?? body.endIndex
        let name = String(decoding: body[body.startIndex..<separator], as: UTF8.self)
        let contents = separator < body.endIndex ? Array(body[(separator + 1)...]) : []
        return EnvdirParser.Entry(
            name: name, kind: kind, contents: kind == .regular ? contents : [])
    }
}
