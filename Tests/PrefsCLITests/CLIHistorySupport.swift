import Foundation
import Preferences
import PreferencesTestSupport
import Testing

/// What the tests of `log`, `revert`, `restore` and `watch --since` share.
extension CLIWorkspace {
    /// Runs each command line in turn; each must succeed.
    func prefsSucceeding(_ commands: [[String]], sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        for arguments in commands {
            let output = try await prefs(arguments)
            try #require(
                output.status == 0, "prefs \(arguments): \(output.standardError)",
                sourceLocation: sourceLocation)
        }
    }

    /// The history as the library reads it from the file, in this process
    /// (the children that wrote it have ended).
    func libraryHistory() async throws -> StoreHistory {
        try await PreferencesStore(fileURL: store).history()
    }

    /// A store whose history keeps only changes #9 and #10 of ten (the
    /// older ones were dropped), written by hand: `a` went 8 → 9 → 10.
    func writeTrimmedHistory() throws {
        let entries = [
            #"{"sequence":9,"at":"2026-12-01T10:00:09.000Z","by":"alice","program":"prefs","#
                + #""host":"web-1","changes":{"a":{"old":8,"new":9}}}"#,
            #"{"sequence":10,"at":"2026-12-01T10:00:10.000Z","by":"alice","sudo_user":"bob","#
                + #""program":"prefs","host":"web-1","changes":{"a":{"old":9,"new":10}}}"#,
        ]
        try write(
            #"{"format":1,"version":0,"sequence":10,"values":{"a":10},"history":["#
                + entries.joined(separator: ",") + "]}", to: store)
    }

    /// The times (`at`) of the history entries the store's document
    /// carries, oldest first, read from its JSON as written.
    func recordedTimes() throws -> [String] {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: store)) as? [String: Any])
        let entries = try #require(document["history"] as? [[String: Any]], "\(document)")
        return try entries.map { try #require($0["at"] as? String, "\($0)") }
    }

    /// The store file's bytes and identity, to show that nothing wrote it.
    func fileState() throws -> FileState {
        FileState(bytes: try Data(contentsOf: store), identity: try identity(store))
    }
}

/// A store file's bytes and identity (inode, modification time).
struct FileState: Equatable {
    let bytes: Data
    let identity: (inode: UInt64, modified: Int64)

    static func == (lhs: FileState, rhs: FileState) -> Bool {
        lhs.bytes == rhs.bytes && lhs.identity == rhs.identity
    }
}

extension ProcessOutput {
    /// Standard output's lines (a last one without its newline too).
    var lines: [String] {
        var lines = standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        return lines.map(String.init)
    }

    /// Expects the output of a usage error: status 2, nothing on standard
    /// output, and on standard error `prefs: error: MESSAGE…` (when
    /// `message` is given) ending in `; usage: USAGE` and a newline.
    func expectUsageError(
        _ usage: String, message: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(status == 2, sourceLocation: sourceLocation)
        #expect(standardOutput == "", sourceLocation: sourceLocation)
        if let message {
            #expect(
                standardError.hasPrefix("prefs: error: \(message)"), "\(standardError)",
                sourceLocation: sourceLocation)
        }
        #expect(
            standardError.hasSuffix("; usage: \(usage)\n"), "\(standardError)",
            sourceLocation: sourceLocation)
    }
}
