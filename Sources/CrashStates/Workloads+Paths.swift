import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of the write paths a plain `set` takes only on some days: the
/// recovery a "sync due" mark asks for, and the sweep of the temporary
/// files a dead writer left.
extension Workload {
    static let pathWorkloads: [Workload] = [syncDue, sweep, legacyRemove]

    /// A set after a writer died between its rename and its directory's
    /// fsync: the lock file's mark says so, and the next writer syncs the
    /// directory first, then clears the mark.
    static let syncDue = Workload(
        name: "sync-due", summary: "a set that finds the lock file's sync-due mark",
        before: ["a": .int(1)],
        steps: [Step(changes: ["a": .int(2)], acknowledgedBy: 1)],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
            let lock = URL(fileURLWithPath: directory + "/prefs.json.lock")
            var bytes = Array(try Data(contentsOf: lock))
            guard bytes.count >= 9 else { throw ExplorerError("the lock file holds no mark") }
            bytes[8] = 1
            try Data(bytes).write(to: lock)
        },
        run: { directory in
            try await openPlain(directory).set(key("a"), 2)
            acknowledge()
        })

    static let orphanText = Array("{\n  \"format\" : 1,\n  \"values\" : {\n    \"a\" : 99".utf8)

    /// A set whose writer first removes a temporary file that a dead writer
    /// left (half a document that holds `a = 99`).
    static let sweep = Workload(
        name: "sweep", summary: "a set that sweeps a dead writer's temporary file",
        before: ["a": .int(1)],
        steps: [Step(changes: ["a": .int(2)], acknowledgedBy: 1)],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
            try Data(orphanText).write(
                to: URL(fileURLWithPath: directory + "/.prefs.json.deadwriter01.tmp"))
        },
        run: { directory in
            try await openPlain(directory).set(key("a"), 2)
            acknowledge()
        },
        checkAfterOpening: { _, _, store in
            store.snapshot.values["a"] == .int(99)
                ? [
                    Violation(
                        invariant: Violation.temporaryRead,
                        detail: "a is 99, from the dead writer's temporary file")
                ] : []
        })
}

extension Workload {
    /// The legacy import that removes its source, which lies in another
    /// directory than the store's.
    static func removingMigration(_ directory: String) -> [any PreferencesMigration] {
        [
            LegacyImport(
                .properties, at: URL(fileURLWithPath: directory + "/old/legacy.properties"),
                keys: .prefix("app.", removingPrefix: true), types: ["dark_mode": .bool],
                afterImport: .remove)
        ]
    }

    /// A legacy file in another directory imported, then removed.
    static let legacyRemove = Workload(
        name: "legacy-remove", summary: "a legacy file in another directory imported, then removed",
        before: ["zoom": .int(3)],
        steps: [Step(changes: ["x": .string("1"), "dark_mode": .bool(true)], acknowledgedBy: 1)],
        reopeningCompletes: true,
        setup: { directory in
            try await openPlain(directory).set(key("zoom"), 3)
            try FileManager.default.createDirectory(
                atPath: directory + "/old", withIntermediateDirectories: true)
            try Data(legacyText.utf8).write(
                to: URL(fileURLWithPath: directory + "/old/legacy.properties"))
        },
        run: { directory in
            _ = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"),
                migrations: removingMigration(directory), liveReads: false)
            acknowledge()
        },
        open: { url, limits in
            try await PreferencesStore(
                fileURL: url, migrations: removingMigration(url.deletingLastPathComponent().path),
                limits: limits, liveReads: false)
        },
        checkAfterOpening: { directory, _, store in
            let imports = try await store.history().entries.filter {
                $0.cause?.contains("import properties") == true
            }
            var violations: [Violation] = []
            if imports.count != 1 {
                violations.append(
                    Violation(
                        invariant: Violation.importOnce,
                        detail: "\(imports.count) history entries of the import"))
            }
            if FileManager.default.fileExists(atPath: directory + "/old/legacy.properties") {
                violations.append(
                    Violation(
                        invariant: Violation.importOnce,
                        detail: "the legacy file is still there after the import"))
            }
            return violations
        })
}
