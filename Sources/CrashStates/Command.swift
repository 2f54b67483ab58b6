import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The command line of `prefs-crash-explorer`: explores the workloads it
/// names, or (`--check`) opens one crash state in a fresh process.
package func runExplorer(_ arguments: [String]) async throws -> Int32 {
    if arguments.first == "--check" { return await runCheck(arguments) }
    guard let options = Options(arguments) else { return usage() }
    return try await explore(options)
}

/// `--check WORKLOAD DIRECTORY ACKNOWLEDGED`: the fresh process that opens
/// one crash state and prints each violation, then "checked".
func runCheck(_ arguments: [String]) async -> Int32 {
    guard arguments.count == 4, let acknowledged = Int(arguments[3]) else { return 2 }
    let sets = (ProcessInfo.processInfo.environment["PREFS_CRASH_ARCHIVE_SETS"] ?? "")
        .split(separator: "-").compactMap { Int($0) }
    if sets.count == 3 {
        Workload.archiveCreated = sets[0]
        Workload.archiveSets = sets[1]...sets[2]
    }
    guard let workload = Workload.named(arguments[1]) else { return 2 }
    for violation in await Checker.check(
        workload, directory: arguments[2], acknowledged: acknowledged)
    {
        print("violation \(violation.invariant): \(violation.detail)")
    }
    print("checked")
    return 0
}

/// What the command line asks to explore.
struct Options {
    var quick = false
    var trace = false
    var names: [String] = []
    var models = PersistenceModel.allCases
    /// `--quick` lowers it to 16 unless given.
    var exhaustiveLimit: Int?

    /// The options `arguments` give, or nil for any it does not know.
    init?(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--trace": trace = true
            case "--workload":
                guard let value = rest.popFirst() else { return nil }
                names.append(value)
            case "--model":
                guard let value = rest.popFirst(), let model = PersistenceModel(rawValue: value)
                else { return nil }
                models = [model]
            case "--exhaustive-limit":
                guard let value = rest.popFirst(), let limit = Int(value) else { return nil }
                exhaustiveLimit = limit
            default: return nil
            }
        }
    }
}

/// Explores the workloads `options` name, prints the table (and the
/// details of any violation), and returns the exit status.
func explore(_ options: Options) async throws -> Int32 {
    let scratch =
        FileManager.default.temporaryDirectory
        .appendingPathComponent("prefs-crash-\(ProcessInfo.processInfo.processIdentifier)").path
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let clock = ContinuousClock()
    let start = clock.now
    let allNames = [
        "set", "group-commit", "new-directory", "migration", "archive", "corrupt-file", "apply",
        "temporary", "manifest", "replica", "secret", "sync-due", "sweep",
        "legacy-remove", "archive-torn-tail", "archive-trim-1000", "legacy-bak", "legacy-envdir",
        "prefs-restore", "prefs-import", "prefs-delete",
    ]
    // --quick: every workload, the archive's recorded as its ends.
    let archiveEnds = ["archive-create", "archive-append", "archive-trim"]
    let quickNames = allNames.flatMap { $0 == "archive" ? archiveEnds : [$0] }
    let known = allNames + archiveEnds
    let names = options.names.isEmpty ? (options.quick ? quickNames : allNames) : options.names
    if let unknown = names.first(where: { !known.contains($0) }) {
        StandardStream.error.write("prefs-crash-explorer: no workload \(unknown)\n")
        return 2
    }
    if names.contains(where: { $0.hasPrefix("archive") }) {
        Workload.archiveSets = try await Workload.findArchiveSets(in: scratch + "/probe")
    }
    var explorer = Explorer(
        scratch: scratch, models: options.models,
        exhaustiveLimit: options.exhaustiveLimit ?? (options.quick ? 16 : 256))
    explorer.trace = options.trace
    explorer.quick = options.quick
    var rows: [Explorer.Row] = []
    var details: [String] = []
    for name in names {
        for (row, record, root) in try await explorer.explore(Workload.named(name)!) {
            rows.append(row)
            if !row.violating.isEmpty {
                details.append(Report.violations(row, record: record, root: root))
            }
        }
    }
    print(Report.table(rows))
    let elapsed = clock.now - start
    print("explored in \(elapsed.components.seconds) s")
    if !details.isEmpty {
        print("")
        print(details.joined(separator: "\n"))
        return 1
    }
    return 0
}

func usage() -> Int32 {
    StandardStream.error.write(
        "usage: prefs-crash-explorer [--quick] [--workload NAME] [--model posix|ext4] [--exhaustive-limit N] [--trace]\n"
    )
    return 2
}
