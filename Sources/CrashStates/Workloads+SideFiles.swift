import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of the files beside a store: its published manifest and the
/// registrations of the processes that have it open.
extension Workload {
    static let sideFileWorkloads: [Workload] = [manifest, replica]

    static let declaredKeys: [PreferenceKeys] = [
        PreferenceKey<Int>("a", default: 0, help: "a counter"),
        PreferenceKey<String>("mode", default: "fast"),
    ]

    /// The store opened declaring its keys: the manifest is published.
    static let manifest = Workload(
        name: "manifest", summary: "a manifest published",
        before: ["a": .int(1)],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
        },
        run: { directory in
            _ = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"), declaring: declaredKeys,
                liveReads: false)
            acknowledge()
        },
        checkBeforeOpening: { directory, acknowledged in
            var violations: [Violation] = []
            let manager = FileManager.default
            var files = [directory + "/prefs.keys.json"]
            for folder in ["/prefs.keys.d", "/prefs.keys.d/versions"] {
                let names = (try? manager.contentsOfDirectory(atPath: directory + folder)) ?? []
                files += names.filter { $0.hasSuffix(".json") }.map {
                    directory + folder + "/" + $0
                }
            }
            for file in files {
                guard let bytes = manager.contents(atPath: file) else { continue }
                if (try? PreferencesManifest(jsonText: String(decoding: bytes, as: UTF8.self)))
                    == nil
                {
                    violations.append(
                        Violation(
                            invariant: Violation.wholeOrAbsent,
                            detail:
                                "\(file.dropFirst(directory.count + 1)) is not a whole manifest (\(bytes.count) bytes)"
                        ))
                }
            }
            guard acknowledged >= 1 else { return violations }
            // Published means all three: the store's manifest, the
            // program's, and the one kept by its digest for replicas.
            guard let published = manager.contents(atPath: directory + "/prefs.keys.json") else {
                violations.append(
                    Violation(
                        invariant: Violation.acknowledgedWrite,
                        detail: "the published manifest prefs.keys.json is gone"))
                return violations
            }
            for folder in ["prefs.keys.d", "prefs.keys.d/versions"] {
                let names =
                    (try? manager.contentsOfDirectory(atPath: directory + "/" + folder)) ?? []
                let copies = names.filter { $0.hasSuffix(".json") }.compactMap {
                    manager.contents(atPath: directory + "/" + folder + "/" + $0)
                }
                if !copies.contains(published) {
                    violations.append(
                        Violation(
                            invariant: Violation.acknowledgedWrite,
                            detail: "the published manifest is missing from \(folder)/"))
                }
            }
            return violations
        })

    /// A replica registers, then reports a change it applied.
    static let replica = Workload(
        name: "replica", summary: "a replica registered, then reporting",
        before: ["a": .int(1)],
        steps: [Step(changes: ["a": .int(2)], acknowledgedBy: 2)],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
        },
        run: { directory in
            let store = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/prefs.json"))
            await store.registeredAsReplica()
            acknowledge()
            try await store.set(key("a"), 2)
            acknowledge()
            // The registration reports what it applied a moment later.
            try await Task.sleep(for: .milliseconds(200))
            // The third mark: from here on, the registration may go.
            acknowledge()
            await store.close()
        },
        checkBeforeOpening: { directory, _ in
            // Nobody holds a registration after a crash: listing them must
            // skip (and remove) every one, whatever is left of it.
            do {
                let listed =
                    try FileStorage(
                        fileURL: URL(fileURLWithPath: directory + "/prefs.json")
                    ).replicas?.list() ?? []
                return listed.isEmpty
                    ? []
                    : [
                        Violation(
                            invariant: Violation.wholeOrAbsent,
                            detail: "\(listed.count) registrations of dead processes listed")
                    ]
            } catch {
                return [
                    Violation(
                        invariant: Violation.wholeOrAbsent, detail: "listing the replicas: \(error)"
                    )
                ]
            }
        },
        checkLive: { directory, acknowledged in
            // From `registeredAsReplica()`'s return (the first mark) to
            // the call of `close()` (the third), the registration is there
            // for others to list.
            registrationsSeen(in: directory, promised: (1...2).contains(acknowledged))
        })

    /// What another process listing the replicas in `directory` reads, as
    /// `prefs replicas` reads it (the files of `prefs.replicas.d/` but the
    /// hidden ones): every file a whole registration, and one at least
    /// where one is `promised`.
    static func registrationsSeen(in directory: String, promised: Bool) -> [Violation] {
        let folder = directory + "/prefs.replicas.d"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var violations: [Violation] = []
        var whole = 0
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let bytes = FileManager.default.contents(atPath: folder + "/" + name).map { Array($0) }
            if PreferencesReplica(jsonBytes: bytes ?? []) != nil {
                whole += 1
            } else {
                violations.append(
                    Violation(
                        invariant: Violation.registered,
                        detail:
                            "prefs.replicas.d/\(name) is listed, and is not a whole registration (\(bytes?.count ?? 0) bytes)"
                    ))
            }
        }
        if promised && whole == 0 {
            violations.append(
                Violation(
                    invariant: Violation.registered,
                    detail: "registeredAsReplica() has returned, and no registration is listed"))
        }
        return violations
    }
}
