import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One change a workload makes, and after which acknowledgement its call
/// had returned.
struct Step: Sendable {
    /// The new value of each key it changes (nil: removed).
    var changes: [String: PreferenceValue?]
    /// The number of the "ack" mark after which the call had returned.
    var acknowledgedBy: Int
}

/// A program run while recording, and what must hold on every state a
/// crash during it may leave.
struct Workload: Sendable {
    var name: String
    /// What it does, for the table.
    var summary: String
    /// The store's file, relative to the workload's directory.
    var file = "prefs.json"
    var limits = PreferencesLimits()
    /// The values stored before the run.
    var before: [String: PreferenceValue] = [:]
    var steps: [Step] = []
    /// Keys declared secret: their history entries carry no value.
    var secretKeys: Set<String> = []
    /// Keys a reopened store may hold besides `before` and `steps`.
    var otherKeys: Set<String> = []
    /// Whether opening the store again finishes the run's work (a
    /// migration): then every step is required, acknowledged or not.
    var reopeningCompletes = false
    /// Whether the checker writes a probe value after its checks (to see
    /// that no sequence number is used twice).
    var probes = true

    /// Prepares the directory (not recorded).
    var setup: @Sendable (_ directory: String) async throws -> Void = { _ in }
    /// The recorded run: marks "ack" each time a call it makes returns.
    var run: @Sendable (_ directory: String) async throws -> Void
    /// Opens the store as a restarted service does.
    var open: @Sendable (_ url: URL, _ limits: PreferencesLimits) async throws -> PreferencesStore =
        {
            try await PreferencesStore(fileURL: $0, limits: $1, liveReads: false)
        }
    /// Checks of the directory before the store is opened on it.
    var checkBeforeOpening: @Sendable (_ directory: String, _ acknowledged: Int) -> [Violation] = {
        _, _ in []
    }
    /// Checks of what another process sees while the run goes on (after
    /// each call, every call made so far in place, nothing lost): the
    /// files a live process keeps only for as long as it lives, which no
    /// crash state can show. Nil: the workload has none.
    var checkLive: (@Sendable (_ directory: String, _ acknowledged: Int) -> [Violation])? = nil
    /// Checks after the store is opened (and after the common checks).
    var checkAfterOpening:
        @Sendable (_ directory: String, _ acknowledged: Int, _ store: PreferencesStore) async throws
            -> [Violation] = { _, _, _ in [] }

    static let all: [Workload] =
        storeWorkloads + [
            migration, archive, archiveCreate, archiveAppend, archiveTrim, corruptFile, secret,
        ] + sideFileWorkloads + pathWorkloads + archiveEdgeWorkloads + legacyWorkloads
        + commandWorkloads

    static func named(_ name: String) -> Workload? { all.first { $0.name == name } }
}

/// An invariant that did not hold, with what was seen.
struct Violation: Sendable, Hashable, CustomStringConvertible {
    var invariant: String
    var detail: String

    var description: String { "\(invariant): \(detail)" }

    static let acknowledgedWrite = "an acknowledged write is on disk"
    static let oldOrNew = "the old document or the new one, whole"
    static let history = "no entry without its change, no change without its entry"
    static let sequence = "no sequence number used twice"
    static let archive = "the archive holds no entry the document contradicts"
    static let archiveAgrees = "the archive's entries agree with the document's"
    static let secretPrivate = "no secret in a file that others can read"
    static let temporaryRead = "no temporary file is read as the store"
    static let temporaryLeft = "no temporary file left once the store has written again"
    static let setAside = "a set-aside copy only where one was needed, with its bytes"
    static let importOnce = "a legacy file imported exactly once"
    static let wholeOrAbsent = "a manifest or a registration whole or absent"
    static let registered = "every registration listed is whole, and the one promised is there"
    static let opens = "the store opens"
}

/// Marks a call of the recorded run as returned.
func acknowledge() {
    DiskRecorder.mark("ack")
}

func key(_ name: String) -> PreferenceKey<Int> { PreferenceKey<Int>(name, default: 0) }
