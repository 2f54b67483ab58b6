import Foundation
import Testing

/// The explorer sees only what the Platform shim records: every call of the
/// library that changes the disk must go through it, and be recorded there.
/// These tests read the library's sources.
struct WritesThroughPlatformTests {
    /// `Sources/Preferences`, from this file's place in the package.
    static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Preferences").path

    /// Each Swift file below `Sources/Preferences`: its path relative to it,
    /// and its lines.
    static func sources() throws -> [(path: String, lines: [String])] {
        let manager = FileManager.default
        let paths = try manager.subpathsOfDirectory(atPath: library)
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let text = try String(contentsOfFile: library + "/" + path, encoding: .utf8)
            return (path, text.components(separatedBy: "\n"))
        }
    }

    /// A line with its comment removed.
    static func code(_ line: String) -> String {
        guard let comment = line.range(of: "//") else { return line }
        return String(line[..<comment.lowerBound])
    }

    @Test func theLibraryReadsItsSourcesHere() throws {
        let sources = try Self.sources()
        #expect(sources.count > 50)
        #expect(sources.contains { $0.path == "Platform/Platform+Recording.swift" })
    }

    /// Outside `Platform/`, nothing can reach the disk but through it: no C
    /// library, no Foundation file API.
    @Test func nothingOutsidePlatformWritesToDisk() throws {
        let forbidden = try NSRegularExpression(
            pattern:
                #"import (Glibc|Darwin|Musl|WinSDK|Android)\b|FileManager|FileHandle|OutputStream|\bfopen\b|\.write\(to(File)?:|\bcreateFile\("#
        )
        var found: [String] = []
        for (path, lines) in try Self.sources() where !path.hasPrefix("Platform/") {
            for (number, line) in lines.enumerated() {
                let code = Self.code(line)
                let range = NSRange(code.startIndex..., in: code)
                if forbidden.firstMatch(in: code, range: range) != nil {
                    found.append(
                        "\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "writes that bypass Platform:\n\(found.joined(separator: "\n"))")
    }

    /// In `Platform/`, every call that changes the disk is in a function
    /// that records it (`DiskRecorder`, `recordCall`, `recordSync`); and no
    /// call the recorder has no form for (an `O_TRUNC` open) is made.
    @Test func everyCallThatChangesTheDiskIsRecorded() throws {
        let changing = try NSRegularExpression(
            pattern:
                #"(?<![\w.])((Glibc|Darwin|Musl)\.)?(write|pwrite|writev|rename|renameat|unlink|unlinkat|link|linkat|symlink|mkdir|mkdirat|rmdir|ftruncate|truncate|fchmod|chmod|fchown|chown|lchown|fsync|fdatasync|creat)\(|O_CREAT|O_TRUNC"#
        )
        let function = try NSRegularExpression(pattern: #"^\s*(\w+ )*(func|init)\b"#)
        // Files that change no file of a store: the standard streams, and
        // the recorder, whose cases are named after the calls.
        let exempt = ["Platform/StandardStream.swift", "Platform/Platform+Recording.swift"]
        let sources = try Self.sources().filter { $0.path.hasPrefix("Platform/") }
        // An unqualified call of a name Platform defines is a call of that
        // wrapper (which is checked where it makes the system call).
        let declaration = try NSRegularExpression(pattern: #"func (\w+)\("#)
        var wrappers = Set<String>()
        for (path, lines) in sources where !exempt.contains(path) {
            for line in lines {
                let range = NSRange(line.startIndex..., in: line)
                for match in declaration.matches(in: line, range: range) {
                    wrappers.insert((line as NSString).substring(with: match.range(at: 1)))
                }
            }
        }
        var unrecorded: [String] = []
        for (path, lines) in sources {
            guard !exempt.contains(path) else { continue }
            let starts = lines.indices.filter { index in
                let line = lines[index]
                return function.firstMatch(in: line, range: NSRange(line.startIndex..., in: line))
                    != nil
            }
            for (number, line) in lines.enumerated() {
                let code = Self.code(line)
                let range = NSRange(code.startIndex..., in: code)
                guard let match = changing.firstMatch(in: code, range: range),
                    !code.contains("func ")
                else { continue }
                let call = (code as NSString).substring(with: match.range)
                if wrappers.contains(String(call.dropLast())) { continue }
                if call == "O_TRUNC" {
                    unrecorded.append(
                        "\(path):\(number + 1): an O_TRUNC open, which the recorder has no form for"
                    )
                    continue
                }
                // The enclosing function: from the last start above to the
                // next start below.
                let start = starts.last { $0 <= number } ?? 0
                let end = starts.first { $0 > number } ?? lines.count
                let body = lines[start..<end].map(Self.code).joined(separator: "\n")
                let recorded = ["DiskRecorder.", "recordCall(", "recordSync("].contains {
                    body.contains($0)
                }
                if !recorded {
                    unrecorded.append(
                        "\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(unrecorded.isEmpty, "unrecorded calls:\n\(unrecorded.joined(separator: "\n"))")
    }
}
