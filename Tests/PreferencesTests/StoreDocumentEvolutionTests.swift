import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Top-level members a reader does not know are kept (<doc:FileFormat>), so a later
/// addition to the format never makes a file unreadable to an older reader.
@Suite(.scaledTimeLimit(minutes: 10)) struct StoreDocumentEvolutionTests {
    static let fileWithAFutureMember = """
        {
          "format" : 1,
          "future" : {
            "note" : [1, 2]
          },
          "values" : {
            "language" : "fr"
          },
          "version" : 0
        }

        """

    @Test func anUnknownTopLevelMemberSurvivesALibraryWrite() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try write(Self.fileWithAFutureMember, to: url)
        let store = try await PreferencesStore(fileURL: url)
        #expect(store[PreferenceKey<String>("language", default: "en")] == "fr")
        try await store.set(PreferenceKey<Bool>("dark_mode", default: false), true)
        let root = try TestJSON.parse(try #require(contents(url)))
        guard case .object(let members) = root else {
            Issue.record("not an object: \(root)")
            return
        }
        #expect(members["future"] == ["note": [1, 2]])
        #expect(members["values"] == ["language": "fr", "dark_mode": true])
    }

    @Test func anUnknownTopLevelMemberSurvivesAPrefsWrite() async throws {
        let workspace = try CLIWorkspace()
        try write(Self.fileWithAFutureMember, to: workspace.store)
        let output = try await workspace.prefs("set", "language", "de")
        #expect(output.status == 0, "\(output.standardError)")
        let root = try TestJSON.parse(try #require(contents(workspace.store)))
        guard case .object(let members) = root else {
            Issue.record("not an object: \(root)")
            return
        }
        #expect(members["future"] == ["note": [1, 2]])
        #expect(members["values"] == ["language": "de"])
    }
}
