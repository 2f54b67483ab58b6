import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of what a store does besides plain writes: migrating, moving
/// its history to the archive, setting a corrupt file aside.
extension Workload {
    static let legacyText = "app.x=1\napp.dark_mode=true\nother=kept\n"

    static func migrations(_ directory: String) -> [any PreferencesMigration] {
        [
            VersionedMigration(version: 1, .rename("zoom", to: "map_zoom")),
            VersionedMigration(version: 2, .retype("map_zoom", as: .double)),
            LegacyImport(
                .properties, at: URL(fileURLWithPath: directory + "/legacy.properties"),
                keys: .prefix("app.", removingPrefix: true), types: ["dark_mode": .bool]),
        ]
    }

    /// Two versioned steps and a legacy import, run while opening.
    static let migration = Workload(
        name: "migration", summary: "two versioned steps and a legacy import",
        before: ["zoom": .int(3)],
        steps: [
            Step(
                changes: [
                    "zoom": nil, "map_zoom": .double(3), "x": .string("1"),
                    "dark_mode": .bool(true),
                ], acknowledgedBy: 1)
        ],
        reopeningCompletes: true,
        setup: { directory in
            try await openPlain(directory).set(key("zoom"), 3)
            try Data(legacyText.utf8).write(
                to: URL(fileURLWithPath: directory + "/legacy.properties"))
        },
        run: { directory in
            _ = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"),
                migrations: migrations(directory), liveReads: false)
            acknowledge()
        },
        open: { url, limits in
            try await PreferencesStore(
                fileURL: url, migrations: migrations(url.deletingLastPathComponent().path),
                limits: limits, liveReads: false)
        },
        checkBeforeOpening: { directory, _ in
            // The legacy file's bytes are never lost: it is there, or renamed.
            let manager = FileManager.default
            let names = [
                directory + "/legacy.properties", directory + "/legacy.properties.migrated",
            ]
            let kept = names.filter {
                manager.contents(atPath: $0).map { Array($0) } == Array(legacyText.utf8)
            }
            return kept.isEmpty
                ? [Violation(invariant: Violation.importOnce, detail: "the legacy file is gone")]
                : []
        },
        checkAfterOpening: { directory, _, store in
            var violations: [Violation] = []
            if store.snapshot.version != 2 {
                violations.append(
                    Violation(
                        invariant: Violation.oldOrNew,
                        detail: "version \(store.snapshot.version) after migrating, not 2"))
            }
            let imports = try await store.history().entries.filter {
                $0.cause?.contains("import properties") == true
            }
            if imports.count != 1 {
                violations.append(
                    Violation(
                        invariant: Violation.importOnce,
                        detail: "\(imports.count) history entries of the import"))
            }
            if FileManager.default.fileExists(atPath: directory + "/legacy.properties") {
                violations.append(
                    Violation(
                        invariant: Violation.importOnce,
                        detail: "the legacy file is still there after the import"))
            }
            return violations
        })

    /// The archive's thresholds: the history keeps 8 entries, so the
    /// archive is rewritten (trimmed) when it grows past 8 + 64.
    static let archiveLimits: PreferencesLimits = {
        var limits = PreferencesLimits()
        limits.history = HistoryLimit(entries: 8)
        return limits
    }()

    /// Sets of `counter` (1, 2, 3 …): those before `archiveSets` in the
    /// setup, those of `archiveSets` recorded — from the one that moves the
    /// document's entries to the archive (an append) to the one that
    /// rewrites the archive shorter (the trim). Found by running them once
    /// (``findArchiveSets(in:)``).
    static let archive = archiveWorkload(
        "archive", "history appended to the archive, then the archive trimmed", archiveSets)
    /// `--quick`'s two ends of `archive`: the set that appends to the
    /// archive, and the set that trims it, each recorded alone.
    static let archiveAppend = archiveWorkload(
        "archive-append", "the history appended to the archive",
        archiveSets.lowerBound...archiveSets.lowerBound)
    static let archiveTrim = archiveWorkload(
        "archive-trim", "the archive trimmed", archiveSets.upperBound...archiveSets.upperBound)
    /// The set that moves the first entries out of the document: it makes
    /// the archive.
    static let archiveCreate = archiveWorkload(
        "archive-create", "the archive made", archiveCreated...archiveCreated)
    nonisolated(unsafe) static var archiveCreated = 1

    /// The sets of `recorded` recorded, those before them in the setup.
    static func archiveWorkload(_ name: String, _ summary: String, _ recorded: ClosedRange<Int>)
        -> Workload
    {
        Workload(
            name: name, summary: summary, limits: archiveLimits,
            before: ["counter": .int(Int64(recorded.lowerBound - 1))],
            steps: recorded.enumerated().map { index, value in
                Step(changes: ["counter": .int(Int64(value))], acknowledgedBy: index + 1)
            },
            setup: { directory in
                let store = try await openPlain(directory, limits: archiveLimits)
                for value in 1..<recorded.lowerBound { try await store.set(key("counter"), value) }
            },
            run: { directory in
                let store = try await openPlain(directory, limits: archiveLimits)
                for value in recorded {
                    try await store.set(key("counter"), value)
                    acknowledge()
                }
            })
    }

    nonisolated(unsafe) static var archiveSets = 1...1

    static func findArchiveSets(in directory: String) async throws -> ClosedRange<Int> {
        let store = try await openPlain(directory, limits: archiveLimits)
        var lines = 0
        var lastMove = 1
        for value in 1...400 {
            try await store.set(key("counter"), value)
            let text =
                (try? String(contentsOfFile: directory + "/prefs.json.history", encoding: .utf8))
                ?? ""
            let count = text.split(separator: "\n").count
            if count < lines { return lastMove...value }
            if count > 0 && lines == 0 { archiveCreated = value }
            if count > lines { lastMove = value }
            lines = count
        }
        throw ExplorerError("the archive was never trimmed in 400 sets")
    }

    /// A corrupt file set aside at open, then a write.
    static let corruptFile = Workload(
        name: "corrupt-file", summary: "a corrupt file set aside, then a set",
        steps: [Step(changes: ["a": .int(1)], acknowledgedBy: 2)],
        probes: false,
        setup: { directory in
            try Data(corruptBytes).write(to: URL(fileURLWithPath: directory + "/prefs.json"))
        },
        run: { directory in
            let store = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"),
                corruption: .backupAndReset, liveReads: false)
            acknowledge()
            try await store.set(key("a"), 1)
            acknowledge()
        },
        open: { url, limits in
            try await PreferencesStore(
                fileURL: url, corruption: .backupAndReset, limits: limits, liveReads: false)
        },
        checkAfterOpening: { directory, _, _ in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            let copies = names.filter { $0.hasPrefix("prefs.json.corrupt-") }
            let intact = copies.filter {
                FileManager.default.contents(atPath: directory + "/" + $0).map { Array($0) }
                    == corruptBytes
            }
            if copies.count != 1 || intact.count != 1 {
                return [
                    Violation(
                        invariant: Violation.setAside,
                        detail: "\(copies.count) set-aside copies, \(intact.count) with the bytes")
                ]
            }
            return []
        })

    static let corruptBytes = Array("{\"format\": 1, \"values\": {\"a\": tru".utf8)
}
