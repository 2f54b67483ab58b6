import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// Inputs the fuzz targets (`scripts/fuzz.sh`) found; each once crashed a
/// parser and must now be answered with the parser's documented error.
@Suite(.scaledTimeLimit(minutes: 10)) struct ReliabilityFuzzRegressionTests {
    /// A binary property list whose collection holds an object reference of
    /// 2^64 − 1: read as a negative index, it passed the "below the object
    /// count" check and trapped reading the offset table.
    @Test func binaryPlistWithANegativeObjectReferenceIsAFormatError() throws {
        let input = try #require(
            Data(
                base64Encoded:
                    "YnBsaXN0MDDaAQIDBAUGCQvV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1dXV1Q0KBwgMDhQVGhscHVpCaWdUYmxVQm9Db3VudFRMaXN0VE5hbWVWTmUqdGVkU09mZj9PblVSYXRpb1RXaGVuEwAAAQAAAAAARAABAv8T/////////9ajDxATEAHRERJRa1BrAOnYPd4AVXggJiB50RYXUWGiGBkjP/gAAAAAAAAT////2gECAwQFBgcICQoLDA0OFBUaG3RlZFNPZmZSVFdoZW4TAAABAAAAAAABE/8T/////////9ajDxATEAHRERJRa1BjAOnYPd4AVXggJiB50RYXUWGiGBkjP/gAAIACAAAT//////8AABP//////////wgAAAABCAAAAAAAAAAeAAAAAAAAAAAAAAAAAAAArQ=="
            ))
        #expect {
            try PropertyListParser.parse(Array(input), file: "found.plist")
        } throws: { error in
            guard case PreferencesError.legacyFormat(let file, _, _, let reason) = error else {
                return false
            }
            return file == "found.plist" && reason.contains("out of range")
        }
    }
}
