import Foundation
import Testing

@testable import Preferences

/// Two snapshots are equal when every read gives the same answer
/// (`PreferencesSnapshot.==`): what only the file keeps for later writes
/// does not count.
@Suite(.scaledTimeLimit(minutes: 10)) struct SnapshotEqualityTests {
    /// The snapshot of a file with `"a": 1` stored and these other members.
    static func snapshot(_ members: String) throws -> PreferencesSnapshot {
        let text = #"{"format": 1, "values": {"a": 1}"# + members + "}"
        let document = try StoreDocument.decode(
            Array(text.utf8), file: "f", limits: PreferencesLimits())
        return PreferencesSnapshot(document, at: Date(timeIntervalSince1970: 1_800_000_000))
    }

    static let entry =
        #"{"sequence":1,"at":"2027-01-15T08:00:00.000Z","by":"alice","program":"app","host":"h","changes":{"a":{"new":1}}}"#

    @Test(arguments: [
        ("a member this version does not know", #", "future": [1]"#, "", true),
        ("the history limit", #", "history_keep": {"entries": 5, "bytes": 100}"#, "", true),
        (
            "the history entries", #", "sequence": 1, "history": [\#(entry)]"#, #", "sequence": 1"#,
            true
        ),
        (
            "a temporary value that has ended",
            #", "temporary": {"a": {"value": 2, "until": "2000-01-01T00:00:00.000Z"}}"#, "", true
        ),
        ("the sequence number", #", "sequence": 3"#, "", false),
        ("the secret keys", #", "secrets": ["a"]"#, "", false),
        ("the version", #", "version": 1"#, "", false),
        (
            "a change record",
            #", "modified": {"a": {"at": "2027-01-15T08:00:00.000Z", "by": "x", "program": "p"}}"#,
            "", false
        ),
        (
            "a temporary value's end, with the same value",
            #", "temporary": {"a": {"value": 1, "until": "2999-01-01T00:00:00.000Z"}}"#, "", false
        ),
    ])
    func snapshotsAreEqualWhenEveryReadIsTheSame(
        differing: String, left: String, right: String, equal: Bool
    ) throws {
        #expect((try Self.snapshot(left) == Self.snapshot(right)) == equal, "\(differing)")
    }
}
