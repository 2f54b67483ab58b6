import Preferences
import PrefsCLI

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of `prefs` commands that write: `restore`, `import` and
/// `delete`.
///
/// Each command runs in this process, through `PrefsTool`, the library the
/// `prefs` executable wraps: the recorder sees every call of this process,
/// so every call the command makes is recorded, as for the library's own
/// workloads (a `prefs` run in a child would record nothing here). The
/// store is named with `--file`, and the environment is empty, so that no
/// suite, manifest or etcd endpoint of the machine running the explorer
/// comes in.
extension Workload {
    static let commandWorkloads: [Workload] = [restoreCommand, importCommand, deleteCommand]

    /// Runs `prefs --file DIRECTORY/prefs.json ARGUMENTS…`; throws unless
    /// it exits 0.
    static func prefs(_ directory: String, _ arguments: [String]) async throws {
        let tool = PrefsTool(
            environment: [:], output: ToolOutput(standardOutput: { _ in }, standardError: { _ in }))
        let status = await tool.run(["--file", directory + "/prefs.json"] + arguments)
        guard status == .success else {
            throw ExplorerError("prefs \(arguments.joined(separator: " ")) exited with \(status)")
        }
    }

    /// `prefs restore --to 1` after three changes: one new change back.
    static let restoreCommand = Workload(
        name: "prefs-restore", summary: "prefs restore --to 1, after three changes",
        before: ["a": .int(2), "b": .int(5)],
        steps: [Step(changes: ["a": .int(1), "b": nil], acknowledgedBy: 1)],
        setup: { directory in
            let store = try await openPlain(directory)
            try await store.set(key("a"), 1)
            try await store.set(key("a"), 2)
            try await store.set(key("b"), 5)
        },
        run: { directory in
            try await prefs(directory, ["restore", "--to", "1"])
            acknowledge()
        })

    static let importedProperties = "x=1\nmode=dark\n"

    /// `prefs import` of a properties file in another directory.
    static let importCommand = Workload(
        name: "prefs-import", summary: "prefs import of a properties file in another directory",
        before: ["a": .int(1)],
        steps: [Step(changes: ["x": .string("1"), "mode": .string("dark")], acknowledgedBy: 1)],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
            try FileManager.default.createDirectory(
                atPath: directory + "/old", withIntermediateDirectories: true)
            try Data(importedProperties.utf8).write(
                to: URL(fileURLWithPath: directory + "/old/app.properties"))
        },
        run: { directory in
            try await prefs(
                directory, ["import", directory + "/old/app.properties", "--format", "properties"])
            acknowledge()
        })

    /// `prefs delete` of one of two keys.
    static let deleteCommand = Workload(
        name: "prefs-delete", summary: "prefs delete of one of two keys",
        before: ["a": .int(1), "b": .int(7)],
        steps: [Step(changes: ["b": nil], acknowledgedBy: 1)],
        setup: { directory in
            let store = try await openPlain(directory)
            try await store.set(key("a"), 1)
            try await store.set(key("b"), 7)
        },
        run: { directory in
            try await prefs(directory, ["delete", "b"])
            acknowledge()
        })
}
