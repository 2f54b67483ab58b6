import Foundation
import Preferences
import PreferencesTestSupport
import Testing

@testable import CrashStates

/// What another process sees while a workload runs, fed registrations
/// written by hand: one made aside and renamed into place is never seen
/// torn, one written in place is, and one promised and never made is
/// missed.
struct LiveViewTests {
    static let root = "/r"
    static let folder = root + "/prefs.replicas.d"
    static let registration =
        Array(
            PreferencesReplica(
                host: "h", pid: 1, program: "service", manifest: "",
                since: Date(timeIntervalSince1970: 0),
                applied: 0
            ).jsonText.utf8) + [0x0A]

    /// The violations the replica workload's live check finds after each
    /// call of `calls`, by call (-1: before the first).
    func seen(_ calls: [DiskOperation]) throws -> [Int: [Violation]] {
        let record = try BrokenRecord(calls: calls, root: Self.root, initial: FileTree())
        let builder = CrashStateBuilder(record: record, model: .posix)
        let check = try #require(Workload.replica.checkLive)
        var seen: [Int: [Violation]] = [:]
        for point in -1..<calls.count {
            let place = try TemporaryDirectory()
            try builder.liveState(after: point).tree.write(to: place.path + "/state")
            let violations = check(place.path + "/state", record.acknowledged[point + 1])
            if !violations.isEmpty { seen[point] = violations }
        }
        return seen
    }

    @Test func aRegistrationRenamedIntoPlaceIsSeenWholeOrNotAtAll() throws {
        let temporary = Self.folder + "/.h-1.json.abcdefghijkl.tmp"
        let seen = try seen([
            .makeDirectory(path: Self.folder), .create(path: temporary, mode: 0o644),
            .write(path: temporary, offset: 0, bytes: Self.registration),
            .rename(from: temporary, to: Self.folder + "/h-1.json"), .mark("ack"),
        ])
        #expect(seen.isEmpty, "\(seen)")
    }

    @Test func aRegistrationWrittenInPlaceIsSeenTorn() throws {
        let path = Self.folder + "/h-1.json"
        let seen = try seen([
            .makeDirectory(path: Self.folder), .create(path: path, mode: 0o644),
            .write(path: path, offset: 0, bytes: Self.registration), .mark("ack"),
        ])
        // After the create, before the write: an empty file is listed.
        let torn = try #require(seen[1])
        #expect(torn.map(\.invariant) == [Violation.registered])
        #expect(torn.first?.detail.contains("h-1.json is listed, and is not a whole") == true)
        #expect(seen.keys.sorted() == [1])
    }

    @Test func aRegistrationPromisedAndNeverMadeIsMissed() throws {
        let seen = try seen([.makeDirectory(path: Self.folder), .mark("ack")])
        #expect(
            seen[1]?.map(\.detail) == [
                "registeredAsReplica() has returned, and no registration is listed"
            ])
        #expect(seen.keys.sorted() == [1])
    }
}
