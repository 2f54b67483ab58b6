import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operator's side of a running service: `prefs` types values as the
/// store holds them, finds the manifest the service published (7.2 and 7.6
/// in Sources/Preferences/Preferences.docc/CommandLineTool.md), and shows
/// who changed what ("Who changed what" in
/// Sources/Preferences/Preferences.docc/OperatorLoop.md).
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIOperatorLoopTests {
    let workspace: CLIWorkspace

    init() throws {
        workspace = try CLIWorkspace()
    }

    /// Where a store at `prefs.json` publishes its manifest.
    var publishedManifest: URL { workspace.file("prefs.keys.json") }

    // MARK: Typing follows the stored value

    @Test func setKeepsAStoredStringAString() async throws {
        #expect(try await workspace.prefs("set", "build", "abc").status == 0)
        let output = try await workspace.prefs("set", "build", "42")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(try await workspace.storedValues()["build"] == .string("42"))
    }

    @Test func aValueThatDoesNotFitTheStoredTypeIsExitThreeWithAHint() async throws {
        try await workspace.prefs("set", "flag", "true")
        let before = try #require(contents(workspace.store))
        let output = try await workspace.prefs("set", "flag", "maybe")
        #expect(output.status == 3)
        #expect(output.standardError.hasPrefix("prefs: error: "))
        #expect(output.standardError.contains("'flag'"))
        #expect(output.standardError.contains("--type"))
        #expect(output.standardError.split(separator: "\n").count == 1)
        #expect(contents(workspace.store) == before)
        // --type changes the stored type on purpose.
        #expect(try await workspace.prefs("set", "flag", "maybe", "--type", "string").status == 0)
        #expect(try await workspace.storedValues()["flag"] == .string("maybe"))
    }

    @Test func theStoredNumberKindIsKept() async throws {
        try await workspace.prefs("set", "zoom", "14.5")
        try await workspace.prefs("set", "zoom", "15")
        try await workspace.prefs("set", "count", "3")
        let output = try await workspace.prefs("set", "count", "3.5")
        #expect(output.status == 3)
        #expect(output.standardError.contains("--type"))
        #expect(try await workspace.storedValues() == ["zoom": .double(15), "count": .int(3)])
    }

    // MARK: The published manifest

    static let manifestText = """
        {
          "format" : 1,
          "keys" : {
            "language" : { "default" : "en", "type" : "string" },
            "map_zoom" : { "default" : 14, "maximum" : 20, "minimum" : 1, "type" : "double" }
          }
        }
        """

    @Test func getPrintsThePublishedDefaultOfAnUnsetKeyWithNoFlags() async throws {
        try write(Self.manifestText, to: publishedManifest)
        let output = try await workspace.prefs("get", "language")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.line == "en")
    }

    @Test func setValidatesAgainstThePublishedManifest() async throws {
        try write(Self.manifestText, to: publishedManifest)
        #expect(try await workspace.prefs("set", "map_zoom", "25").status == 3)
        #expect(try await workspace.prefs("set", "map_zoom", "15").status == 0)
        #expect(try await workspace.storedValues() == ["map_zoom": .double(15)])
    }

    @Test func anUnreadablePublishedManifestIsExitFour() async throws {
        try write("{ \"format\" : 1, \"keys\" : ", to: publishedManifest)
        for arguments in [["get", "language"], ["set", "language", "fr"], ["list"]] {
            let output = try await workspace.prefs(arguments)
            #expect(output.status == 4, "\(arguments)")
            #expect(output.standardError.contains(publishedManifest.path), "\(arguments)")
        }
        #expect(contents(workspace.store) == nil)
    }

    // MARK: Who changed what

    @Test func listLongNamesTheUserAndProgramOfTheLastChange() async throws {
        // Whole milliseconds: the file records the time to the millisecond.
        let before = Date(
            timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        try await workspace.prefs("set", "language", "fr")
        let after = Date()
        let output = try await workspace.prefs("list", "--long")
        #expect(output.status == 0, "\(output.standardError)")
        let line = output.line
        let prefix = "language = \"fr\"  # "
        let suffix = " by \(effectiveUserName()) using prefs"
        #expect(line.hasPrefix(prefix) && line.hasSuffix(suffix), "\(line)")
        // Between them, the time of the change: ISO 8601, UTC, milliseconds.
        let time = String(line.dropFirst(prefix.count).dropLast(suffix.count))
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let when = try #require(try? format.parse(time), "not an ISO 8601 UTC time: \(time)")
        #expect(time.hasSuffix("Z") && time.count == "2026-12-01T09:30:12.345Z".count, "\(time)")
        #expect(when >= before && when <= after, "\(time) is not the time of the set")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root: SUDO_USER is recorded only for root"))
    func underSudoTheInvokingUserIsNamedBesideRoot() async throws {
        let output = try await workspace.prefs(
            environment: ["SUDO_USER": "alice"],
            ["--file", workspace.store.path, "set", "language", "fr"])
        #expect(output.status == 0, "\(output.standardError)")
        let line = try await workspace.prefs("get", "language", "--long").line
        #expect(line.hasSuffix(" by root (sudo from alice) using prefs"), "\(line)")
        let store = try await PreferencesStore(fileURL: workspace.store)
        let change = try #require(store.snapshot.modification(forKey: "language"))
        #expect(change.user == "root" && change.sudoUser == "alice")
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to run prefs as another user"))
    func theRecordNamesTheUserWhoseRightsMadeTheChange() async throws {
        giveAway(workspace.directory.path, to: nobodyUser)
        let output = try await runChild(
            "prefs", ["--file", workspace.store.path, "set", "language", "fr"], as: nobodyUser)
        #expect(output.status == 0, "\(output.standardError)")
        let expected = try #require(getpwuid(nobodyUser)).pointee.pw_name.map {
            String(cString: $0)
        }
        let store = try await PreferencesStore(fileURL: workspace.store)
        let change = try #require(store.snapshot.modification(forKey: "language"))
        #expect(change.user == expected)
        #expect(change.sudoUser == nil)
        #expect(change.program == "prefs")
    }
}
