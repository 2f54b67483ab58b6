import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of the store's own write path.
extension Workload {
    static let storeWorkloads: [Workload] = [set, groupCommit, newDirectory, apply, temporary]

    /// One `set` on a store holding a value.
    static let set = Workload(
        name: "set", summary: "one set on an existing store",
        before: ["a": .int(1), "b": .int(7)],
        steps: [Step(changes: ["a": .int(2)], acknowledgedBy: 1)],
        setup: { directory in
            let store = try await openPlain(directory)
            try await store.set(key("a"), 1)
            try await store.set(key("b"), 7)
        },
        run: { directory in
            let store = try await openPlain(directory)
            try await store.set(key("a"), 2)
            acknowledge()
        })

    /// Several edits queued together, written as one group commit (or a
    /// few), each acknowledged when its call returns.
    static let groupCommit = Workload(
        name: "group-commit", summary: "five edits in one group commit",
        before: ["a": .int(1)],
        steps: (1...5).map { Step(changes: ["k\($0)": .int(Int64($0))], acknowledgedBy: 1) },
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
        },
        run: { directory in
            let store = try await openPlain(directory)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...5 {
                    group.addTask { try await store.set(key("k\(index)"), index) }
                }
                try await group.waitForAll()
            }
            acknowledge()
        })

    /// The first write of a store whose directory does not exist yet.
    static let newDirectory = Workload(
        name: "new-directory",
        summary: "first write, in a directory not made yet", file: "new/deeper/prefs.json",
        steps: [Step(changes: ["a": .int(1)], acknowledgedBy: 1)],
        run: { directory in
            let store = try await PreferencesStore(
                fileURL: URL(fileURLWithPath: directory + "/new/deeper/prefs.json"),
                liveReads: false)
            try await store.set(key("a"), 1)
            acknowledge()
        })

    /// `apply` of 100 keys, a document of several blocks.
    static let apply = Workload(
        name: "apply", summary: "apply of 100 keys",
        before: ["a": .int(1)],
        steps: [Step(changes: hundredKeys.mapValues { $0 }, acknowledgedBy: 1)],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
        },
        run: { directory in
            let store = try await openPlain(directory)
            _ = try await store.apply(hundredKeys.merging(["a": .int(1)]) { $1 })
            acknowledge()
        })

    static let hundredKeys: [String: PreferenceValue] = Dictionary(
        uniqueKeysWithValues: (0..<100).map {
            (
                "service.setting_\($0)",
                PreferenceValue.string("value \($0) " + String(repeating: "x", count: 60))
            )
        })

    /// A temporary value over a stored one.
    static let temporary = Workload(
        name: "temporary", summary: "a temporary value for an hour",
        before: ["level": .string("info")],
        steps: [Step(changes: ["level": .string("debug")], acknowledgedBy: 1)],
        setup: { directory in
            try await openPlain(directory).set(
                PreferenceKey<String>("level", default: "warning"), "info")
        },
        run: { directory in
            try await openPlain(directory).set(
                PreferenceKey<String>("level", default: "warning"), "debug",
                for: .seconds(3600))
            acknowledge()
        },
        checkAfterOpening: { _, acknowledged, store in
            let snapshot = store.snapshot
            let level = snapshot.value(forKey: "level")
            if level == .string("debug") && snapshot.temporaryValueEnd(forKey: "level") == nil {
                return [
                    Violation(
                        invariant: Violation.oldOrNew,
                        detail: "the temporary value is there without its end")
                ]
            }
            return []
        })

    /// The store at `prefs.json` in `directory`, live reads off.
    static func openPlain(_ directory: String, limits: PreferencesLimits = PreferencesLimits())
        async throws -> PreferencesStore
    {
        try await PreferencesStore(
            fileURL: URL(fileURLWithPath: directory + "/prefs.json"), limits: limits,
            liveReads: false)
    }
}
