import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// `prefs export` prints the library's export (`snapshot.export(as:)`) byte
/// for byte, and its warnings.
@Suite(.scaledTimeLimit(minutes: 5)) struct CLIExportLibraryTests {
    @Test(arguments: PreferencesExport.Format.allCases)
    func exportPrintsTheLibrarysText(format: PreferencesExport.Format) async throws {
        let workspace = try CLIWorkspace()
        let values: [String: PreferenceValue] = [
            "b": [1, ["c": "d", "n": .null]], "a": [], "e\u{301}": 1.5, "s": "x y=z\n",
        ]
        try await PreferencesStore(fileURL: workspace.store).edit { prefs in
            for (key, value) in values { prefs[raw: key] = value }
        }
        let export = try PreferencesSnapshot(values: values).export(as: format)
        let output = try await workspace.prefs("export", "--format", format.rawValue)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == export.text)
        #expect(output.standardError == export.warnings.map { "prefs: warning: \($0)\n" }.joined())
        if format == .json {
            #expect(
                output.standardOutput == """
                    {
                      "a" : [],
                      "b" : [
                        1,
                        {
                          "c" : "d",
                          "n" : null
                        }
                      ],
                      "e\u{301}" : 1.5,
                      "s" : "x y=z\\n"
                    }

                    """)
        }
        if format == .plist { #expect(export.omitted == ["b[1].n"]) }
    }
}
