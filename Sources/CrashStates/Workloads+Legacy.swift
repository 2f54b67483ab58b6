import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of the legacy imports whose source is more than one file: a
/// shared-prefs file with the `.bak` that Android leaves beside a write it
/// did not finish, and an envdir (a directory of files). Both sources lie
/// in another directory than the store's.
extension Workload {
    static let legacyWorkloads: [Workload] = [legacyBackup, legacyEnvdir]

    /// The backup Android kept: the values to import.
    static let sharedPrefsBackup = Array(
        """
        <?xml version='1.0' encoding='utf-8' standalone='yes' ?>
        <map>
            <string name="x">1</string>
            <boolean name="dark_mode" value="true" />
        </map>

        """.utf8)
    /// The main file of a write Android did not finish: cut short, never
    /// to be read while its backup is there.
    static let sharedPrefsTorn = Array(
        "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n    <string name=\"x\">2</str"
            .utf8)

    static func backupMigration(_ directory: String) -> [any PreferencesMigration] {
        [LegacyImport(.sharedPrefs, at: URL(fileURLWithPath: directory + "/old/app.xml"))]
    }

    /// A shared-prefs file and its `.bak` imported (the `.bak` read), then
    /// both renamed to `.migrated`.
    static let legacyBackup = Workload(
        name: "legacy-bak",
        summary: "a shared-prefs file and its .bak in another directory imported, then renamed",
        before: ["zoom": .int(3)],
        steps: [Step(changes: ["x": .string("1"), "dark_mode": .bool(true)], acknowledgedBy: 1)],
        reopeningCompletes: true,
        setup: { directory in
            try await openPlain(directory).set(key("zoom"), 3)
            try FileManager.default.createDirectory(
                atPath: directory + "/old", withIntermediateDirectories: true)
            try Data(sharedPrefsTorn).write(to: URL(fileURLWithPath: directory + "/old/app.xml"))
            try Data(sharedPrefsBackup).write(
                to: URL(fileURLWithPath: directory + "/old/app.xml.bak"))
        },
        run: { directory in
            _ = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"),
                migrations: backupMigration(directory), liveReads: false)
            acknowledge()
        },
        open: { url, limits in
            try await PreferencesStore(
                fileURL: url, migrations: backupMigration(url.deletingLastPathComponent().path),
                limits: limits, liveReads: false)
        },
        checkBeforeOpening: { directory, _ in
            // The backup's bytes are never lost: there, or renamed.
            let kept = ["/old/app.xml.bak", "/old/app.xml.bak.migrated"].filter {
                FileManager.default.contents(atPath: directory + $0).map { Array($0) }
                    == sharedPrefsBackup
            }
            return kept.isEmpty
                ? [Violation(invariant: Violation.importOnce, detail: "the .bak file is gone")]
                : []
        },
        checkAfterOpening: { directory, _, store in
            try await importedOnce(
                store, leaving: [directory + "/old/app.xml", directory + "/old/app.xml.bak"])
        })

    static let envdirFiles: [String: [UInt8]] = [
        "x": Array("1\n".utf8), "dark_mode": Array("true\n".utf8),
    ]

    static func envdirMigration(_ directory: String) -> [any PreferencesMigration] {
        [
            LegacyImport(
                .envdir, at: URL(fileURLWithPath: directory + "/old/env"),
                types: ["dark_mode": .bool], afterImport: .remove)
        ]
    }

    /// An envdir imported, then removed: renamed aside whole, then its
    /// files and itself removed.
    static let legacyEnvdir = Workload(
        name: "legacy-envdir", summary: "an envdir in another directory imported, then removed",
        before: ["zoom": .int(3)],
        steps: [Step(changes: ["x": .string("1"), "dark_mode": .bool(true)], acknowledgedBy: 1)],
        reopeningCompletes: true,
        setup: { directory in
            try await openPlain(directory).set(key("zoom"), 3)
            try FileManager.default.createDirectory(
                atPath: directory + "/old/env", withIntermediateDirectories: true)
            for (name, bytes) in envdirFiles {
                try Data(bytes).write(to: URL(fileURLWithPath: directory + "/old/env/" + name))
            }
        },
        run: { directory in
            _ = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"),
                migrations: envdirMigration(directory), liveReads: false)
            acknowledge()
        },
        open: { url, limits in
            try await PreferencesStore(
                fileURL: url, migrations: envdirMigration(url.deletingLastPathComponent().path),
                limits: limits, liveReads: false)
        },
        checkAfterOpening: { directory, _, store in
            try await importedOnce(store, leaving: [directory + "/old/env"])
        })

    /// One history entry of an import, and none of `sources` left.
    static func importedOnce(_ store: PreferencesStore, leaving sources: [String]) async throws
        -> [Violation]
    {
        let imports = try await store.history().entries.filter {
            $0.cause?.contains("import ") == true
        }
        var violations: [Violation] = []
        if imports.count != 1 {
            violations.append(
                Violation(
                    invariant: Violation.importOnce,
                    detail: "\(imports.count) history entries of the import"))
        }
        for source in sources where FileManager.default.fileExists(atPath: source) {
            violations.append(
                Violation(
                    invariant: Violation.importOnce,
                    detail: "\(URL(fileURLWithPath: source).lastPathComponent) is still there"))
        }
        return violations
    }
}
