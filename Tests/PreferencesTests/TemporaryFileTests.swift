import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// S2 (<doc:StoreGuarantees>): every write goes to a new temporary file in
/// the store's directory, created with `O_CREAT|O_EXCL|O_NOFOLLOW` under an
/// unpredictable name, so nothing another user planted at a name they could
/// guess is ever opened, followed or overwritten.
@Suite(.serialized, .takesTurns(.diskRecorder)) struct TemporaryFileTests {
    /// Names a writer's temporary file could be guessed by: fixed suffixes,
    /// and the writer's process id.
    static func guessableNames(of name: String) -> [String] {
        let pid = ProcessInfo.processInfo.processIdentifier
        return [
            ".\(name).tmp", "\(name).tmp", ".\(name).\(pid).tmp", "\(name).new", "\(name)~",
            ".\(name).swp",
        ]
    }

    /// The counter in the store's file, read with `JSONSerialization`.
    static func storedCounter(_ url: URL) throws -> Int? {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        return ((document as? [String: Any])?["values"] as? [String: Any])?["counter"] as? Int
    }

    @Test func linksAndFilesPlantedAtGuessableTemporaryNamesAreNeitherFollowedNorOverwritten()
        async throws
    {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let victim = directory.file("victim")
        try write("the victim's bytes", to: victim)
        let names = Self.guessableNames(of: "prefs.json")
        // Every other name is a link to the victim; the rest are files.
        for (index, name) in names.enumerated() {
            if index.isMultiple(of: 2) {
                try FileManager.default.createSymbolicLink(
                    at: directory.file(name), withDestinationURL: victim)
            } else {
                try write("planted at \(name)", to: directory.file(name))
            }
        }
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        // The first write creates the file; the next ones replace it.
        for value in 1...3 { try await store.set(.counter, value) }

        #expect(contents(victim) == "the victim's bytes", "a write went through a planted link")
        for (index, name) in names.enumerated() {
            let planted = directory.file(name)
            if index.isMultiple(of: 2) {
                let destination = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: planted.path)
                #expect(destination == victim.path, "the link at \(name) was moved or replaced")
            } else {
                #expect(
                    contents(planted) == "planted at \(name)", "the file at \(name) was overwritten"
                )
            }
        }
        let status = try #require(fileStatus(url.path, followingLinks: false))
        #expect(
            UInt32(status.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG),
            "prefs.json is not a file of its own")
        #expect(try Self.storedCounter(url) == 3)
    }

    @Test func eachWriteCreatesItsTemporaryFileUnderANameOfItsOwnThatCannotBeGuessed()
        async throws
    {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(.counter, 0)
        let root = directory.url.resolvingSymlinksInPath().path
        DiskRecorder.start()
        do {
            for value in 1...10 { try await store.set(.counter, value) }
        } catch {
            _ = DiskRecorder.stop()
            throw error
        }
        // The temporary files of the store's file (not of its history's).
        let created = DiskRecorder.stop().compactMap { operation -> String? in
            guard case .create(let path, _) = operation, path.hasPrefix(root + "/") else {
                return nil
            }
            let name = String(path.dropFirst(root.count + 1))
            return name.hasPrefix(".prefs.json.") && !name.hasPrefix(".prefs.json.history.")
                ? name : nil
        }
        #expect(created.count == 10, "\(created)")
        #expect(Set(created).count == created.count, "a temporary name was used twice: \(created)")
        let pid = String(ProcessInfo.processInfo.processIdentifier)
        for name in created {
            let middle = name.dropFirst(".prefs.json.".count).dropLast(".tmp".count)
            #expect(
                name.hasSuffix(".tmp") && middle.count >= 12
                    && middle.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) }
                    && !middle.contains(pid),
                "\(name) is not .prefs.json.<at least 12 random characters>.tmp")
        }
        #expect(try Self.storedCounter(url) == 10)
    }
}
