import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

extension TemporaryDirectory {
    /// Writes `text` to `name` (its folders made), and returns its URL.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> URL {
        try write(name, Array(text.utf8))
    }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
        return file
    }
}

@Suite(.scaledTimeLimit(minutes: 10)) struct LegacyReaderTests {
    @Test func readsProperties() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("app.properties", "a = 1\nb: zwei\n")
        let contents = try LegacyReader.read(.properties, at: file)
        #expect(contents == LegacyContents(values: ["a": "1", "b": "zwei"]))
    }

    @Test func readsPropertiesAsISO8859_1() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("latin.properties", Array("k=".utf8) + [0xE9])
        #expect(
            try LegacyReader.read(.properties, at: file, encoding: .iso8859_1).values == ["k": "é"])
        #expect(throws: PreferencesError.self) { try LegacyReader.read(.properties, at: file) }
    }

    @Test func missingFileIsAnIOError() throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("absent.plist")
        for format in [LegacyFormat.properties, .plist, .json, .sharedPrefs, .envdir] {
            #expect {
                try LegacyReader.read(format, at: file)
            } throws: { error in
                guard case .io(_, let path, let code, let message)? = error as? PreferencesError
                else { return false }
                return path == file.path && code == ENOENT && !message.isEmpty
            }
        }
    }

    @Test func directoryWhereAFileIsExpectedIsAnIOError() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try LegacyReader.read(.json, at: directory.url)
        } throws: { error in
            guard case .io(_, _, let code, _)? = error as? PreferencesError else { return false }
            return code == EISDIR
        }
    }

    @Test func malformedContentIsALegacyFormatError() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("bad.json", "{\"a\": }")
        #expect {
            try LegacyReader.read(.json, at: file)
        } throws: { error in
            guard case .legacyFormat(let path, let line, _, _)? = error as? PreferencesError else {
                return false
            }
            return path == file.path && line == 1
        }
    }

    @Test func sharedPrefsBackupWins() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("prefs.xml", "<map><int name=\"a\" value=\"1\" /></map>")
        #expect(try LegacyReader.read(.sharedPrefs, at: file).values == ["a": 1])
        #expect(LegacyReader.sourceFiles(.sharedPrefs, at: file) == [file])
        // A half-written main file and a good backup: Android reads the backup.
        try directory.write("prefs.xml", "<map><int name=\"a\" value=")
        let backup = try directory.write(
            "prefs.xml.bak", "<map><int name=\"a\" value=\"2\" /></map>")
        #expect(try LegacyReader.read(.sharedPrefs, at: file).values == ["a": 2])
        #expect(
            LegacyReader.sourceFiles(.sharedPrefs, at: file).map(\.path) == [
                file.path, backup.path,
            ])
    }

    @Test func sharedPrefsBackupAloneIsRead() throws {
        let directory = try TemporaryDirectory()
        try directory.write("p.xml.bak", "<map><string name=\"s\">b</string></map>")
        let file = directory.url.appendingPathComponent("p.xml")
        #expect(try LegacyReader.read(.sharedPrefs, at: file).values == ["s": "b"])
    }

    @Test func readsPlistXMLAndBinary() throws {
        let directory = try TemporaryDirectory()
        let sample: [String: Any] = ["n": 3, "s": "x", "d": Data([1, 2, 3])]
        let xml = try directory.write(
            "a.plist",
            Array(
                try PropertyListSerialization.data(
                    fromPropertyList: sample, format: .xml, options: 0)))
        let binary = try directory.write(
            "b.plist",
            Array(
                try PropertyListSerialization.data(
                    fromPropertyList: sample, format: .binary, options: 0)))
        let expected: [String: PreferenceValue] = ["n": 3, "s": "x", "d": "AQID"]
        #expect(try LegacyReader.read(.plist, at: xml).values == expected)
        #expect(try LegacyReader.read(.plist, at: binary).values == expected)
    }

    @Test func readsAnEnvdir() throws {
        let directory = try TemporaryDirectory()
        let env = directory.url.appendingPathComponent("env")
        try directory.write("env/FOO", "bar\nignored\n")
        try directory.write("env/UNSET", [])
        try directory.write("env/.hidden", "x")
        try directory.write("env/A=B", "x")
        try directory.write("env/sub/inner", "x")
        try directory.write("target", "linked\n")
        try FileManager.default.createSymbolicLink(
            at: env.appendingPathComponent("LINK"),
            withDestinationURL: directory.url.appendingPathComponent("target"))
        try FileManager.default.createSymbolicLink(
            atPath: env.appendingPathComponent("DANGLING").path,
            withDestinationPath: "/nonexistent-\(UUID())")
        let contents = try LegacyReader.read(.envdir, at: env)
        #expect(contents.values == ["FOO": "bar", "LINK": "linked"])
        #expect(
            contents.warnings == [
                "skipped \(env.path)/A=B: a variable name cannot contain '='",
                "skipped \(env.path)/DANGLING: it is not a regular file",
                "skipped \(env.path)/sub: it is a directory",
            ])
        #expect(LegacyReader.sourceFiles(.envdir, at: env) == [env])
    }

    @Test func envdirThatIsAFileIsAnIOError() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("notadir", "x")
        #expect {
            try LegacyReader.read(.envdir, at: file)
        } throws: { error in
            guard case .io(_, _, let code, _)? = error as? PreferencesError else { return false }
            return code == ENOTDIR
        }
    }

    @Test func formatNamesMatchTheCommandLine() {
        #expect(
            LegacyFormat.allCases.map(\.rawValue) == [
                "properties", "shared-prefs", "plist", "envdir", "json",
            ])
        #expect(PropertiesEncoding(rawValue: "iso-8859-1") == .iso8859_1)
    }
}
