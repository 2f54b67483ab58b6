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
    static let pathWorkloads: [Workload] = [syncDue, sweep]

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
