import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// S9 (<doc:StoreGuarantees>): handles on one file in a process share one
/// state, and the state keeps the limits of the open that made it. A
/// second open's own `limits:`, stricter or looser, do not apply while the
/// first handle is open.
@Suite struct SharedLimitsTests {
    /// A key of 32 bytes: over a limit of 16, well within the default 1 KiB.
    static let longKey = PreferenceKey<Int>("a.key.of.thirty.two.bytes.long..", default: 0)

    static func limits(maxKeyLength: Int) -> PreferencesLimits {
        var limits = PreferencesLimits()
        limits.maxKeyLength = maxKeyLength
        return limits
    }

    @Test func aSecondOpenKeepsTheStricterLimitsOfTheFirst() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let first = try await PreferencesStore(
            fileURL: url, limits: Self.limits(maxKeyLength: 16), liveReads: false)
        let second = try await PreferencesStore(fileURL: url, liveReads: false)
        await #expect {
            try await second.set(Self.longKey, 1)
        } throws: { error in
            if case PreferencesError.invalidKey = error { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: url.path), "the refused write wrote a file")
        // The first handle is open until here, and agrees.
        #expect(first[Self.longKey] == 0)
        #expect(second[Self.longKey] == 0)
    }

    @Test func aSecondOpenKeepsTheLooserLimitsOfTheFirst() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let first = try await PreferencesStore(fileURL: url, liveReads: false)
        let second = try await PreferencesStore(
            fileURL: url, limits: Self.limits(maxKeyLength: 16), liveReads: false)
        try await second.set(Self.longKey, 1)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        let values = (document as? [String: Any])?["values"] as? [String: Any]
        #expect(values?[Self.longKey.name] as? Int == 1)
        // The first handle is open until here, and sees the write at once.
        #expect(first[Self.longKey] == 1)
    }

    /// Once every handle has been closed, the next open makes a new state
    /// with its own limits: here looser than the first's. (A handle only
    /// released lets its state go when its last write has finished.)
    @Test func anOpenAfterEveryHandleHasGoneHasItsOwnLimits() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var first: PreferencesStore? = try await PreferencesStore(
            fileURL: url, limits: Self.limits(maxKeyLength: 16), liveReads: false)
        await #expect(throws: PreferencesError.self) { try await first!.set(Self.longKey, 1) }
        try await first!.set(.counter, 1)
        await first!.close()
        first = nil
        let later = try await PreferencesStore(fileURL: url, liveReads: false)
        #expect(later[.counter] == 1)
        try await later.set(Self.longKey, 2)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        let values = (document as? [String: Any])?["values"] as? [String: Any]
        #expect(values?[Self.longKey.name] as? Int == 2)
    }
}
