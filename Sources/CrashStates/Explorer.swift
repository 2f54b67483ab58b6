import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a workload while recording, builds every crash state the models
/// allow, and has a fresh process open each one.
struct Explorer {
    /// Where workloads run and states are built.
    var scratch: String
    var models: [PersistenceModel]
    var exhaustiveLimit: Int
    /// Fewer states for each workload (``CrashStateBuilder/quick``).
    var quick = false
    /// Print each workload's recorded calls.
    var trace = false

    /// One row of the table.
    struct Row {
        var workload: String
        /// The model, or nil for the live row: what other processes see
        /// while the run goes on (``Workload/checkLive``).
        var model: PersistenceModel?
        var calls = 0
        var crashPoints = 0
        /// Distinct states (a tree and how many writes were acknowledged).
        var states = 0
        /// Those opened in a fresh process: not already opened for an
        /// earlier model of the same workload.
        var opened = 0
        var violating: [(state: CrashState, acknowledged: Int, violations: [Violation])] = []
    }

    private struct Key: Hashable {
        var tree: FileTree
        var acknowledged: Int
    }

    func explore(_ workload: Workload) async throws -> [(Row, BrokenRecord, String)] {
        let directory = scratch + "/run-" + workload.name
        let record = try await Self.record(workload, in: directory)
        let calls = record.calls
        let root = record.root
        if trace {
            for (index, call) in calls.enumerated() {
                print("\(workload.name) #\(index) \(BrokenRecord.describe(call, root: root))")
            }
        }
        var checked: [Key: [Violation]] = [:]
        var rows: [(Row, BrokenRecord, String)] = []
        for model in models {
            var row = Row(workload: workload.name, model: model)
            row.calls = calls.filter { if case .mark = $0 { false } else { true } }.count
            let builder = CrashStateBuilder(
                record: record, model: model, exhaustiveLimit: exhaustiveLimit, quick: quick)
            var work: [(CrashState, Int)] = []
            for point in -1..<calls.count {
                row.crashPoints += 1
                let acknowledged = record.acknowledged[point + 1]
                for state in builder.states(after: point) {
                    work.append((state, acknowledged))
                }
            }
            // Distinct states: the same tree, as many writes acknowledged,
            // left by two crash points is one state.
            let distinct = Set(work.map { Key(tree: $0.0.tree, acknowledged: $0.1) })
            row.states = distinct.count
            let fresh = distinct.filter { checked[$0] == nil }
            row.opened = fresh.count
            let results = try await open(Array(fresh), workload: workload)
            checked.merge(results) { $1 }
            for (state, acknowledged) in work {
                let violations = checked[Key(tree: state.tree, acknowledged: acknowledged)] ?? []
                if !violations.isEmpty { row.violating.append((state, acknowledged, violations)) }
            }
            rows.append((row, record, root))
        }
        if let checkLive = workload.checkLive {
            rows.append((try live(workload, record, checkLive), record, root))
        }
        return rows
    }

    /// The live row: after each call, the tree every call made so far
    /// leaves in place, checked here (no store is opened on it).
    private func live(
        _ workload: Workload, _ record: BrokenRecord,
        _ check: @Sendable (String, Int) -> [Violation]
    ) throws -> Row {
        var row = Row(workload: workload.name, model: nil)
        row.calls = record.calls.filter { if case .mark = $0 { false } else { true } }.count
        let builder = CrashStateBuilder(record: record, model: .posix)
        var checked: [Key: [Violation]] = [:]
        for point in -1..<record.calls.count {
            row.crashPoints += 1
            let state = builder.liveState(after: point)
            let key = Key(tree: state.tree, acknowledged: record.acknowledged[point + 1])
            if checked[key] == nil {
                let place = scratch + "/live-\(workload.name)-\(point + 1)"
                try key.tree.write(to: place)
                defer { try? FileManager.default.removeItem(atPath: place) }
                checked[key] = check(place, key.acknowledged)
            }
            if let violations = checked[key], !violations.isEmpty {
                row.violating.append((state, key.acknowledged, violations))
            }
        }
        row.states = checked.count
        row.opened = checked.count
        return row
    }

    /// Sets `workload` up in `directory` (made for it), runs it while
    /// recording, and breaks the calls up.
    ///
    /// The recorder sees every call of the process. The explorer runs
    /// nothing else, so a call outside `directory` is a blind spot and
    /// fails the run; a test process runs other tests at once, so it passes
    /// `besideOtherWork` to keep only the calls under `directory`.
    static func record(
        _ workload: Workload, in directory: String, besideOtherWork: Bool = false
    ) async throws -> BrokenRecord {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try await workload.setup(directory)
        let initial = try FileTree.read(directory)
        DiskRecorder.start()
        do {
            try await workload.run(directory)
        } catch {
            _ = DiskRecorder.stop()
            throw error
        }
        var calls = DiskRecorder.stop()
        let root = try realPath(directory)
        if besideOtherWork { calls = calls.filter { $0.touches(under: root) } }
        return try BrokenRecord(calls: calls, root: root, initial: initial)
    }

    /// Opens each state in a fresh process, two at a time.
    private func open(_ keys: [Key], workload: Workload) async throws -> [Key: [Violation]] {
        var results: [Key: [Violation]] = [:]
        var next = 0
        try await withThrowingTaskGroup(of: (Key, [Violation]).self) { group in
            func start() throws {
                guard next < keys.count else { return }
                let key = keys[next]
                let place = scratch + "/state-\(workload.name)-\(next)"
                next += 1
                try key.tree.write(to: place)
                group.addTask {
                    defer { try? FileManager.default.removeItem(atPath: place) }
                    return (key, try checkInChild(workload, place, key.acknowledged))
                }
            }
            for _ in 0..<2 { try start() }
            while let (key, violations) = try await group.next() {
                results[key] = violations
                try start()
            }
        }
        return results
    }

    /// Runs this program with `--check` on `directory` and reads its verdict.
    private func checkInChild(_ workload: Workload, _ directory: String, _ acknowledged: Int)
        throws -> [Violation]
    {
        var environment = ProcessInfo.processInfo.environment
        environment["PREFS_CRASH_ARCHIVE_SETS"] =
            "\(Workload.archiveCreated)-\(Workload.archiveSets.lowerBound)-\(Workload.archiveSets.upperBound)"
        let child = try CheckingProcess.run(
            ["--check", workload.name, directory, String(acknowledged)],
            environment: environment, timeout: 120)
        var violations: [Violation] = []
        var sawEnd = false
        for line in String(decoding: child.output, as: UTF8.self).split(separator: "\n") {
            if line == "checked" { sawEnd = true }
            guard line.hasPrefix("violation "), let colon = line.firstIndex(of: ":") else {
                continue
            }
            violations.append(
                Violation(
                    invariant: String(line[line.index(line.startIndex, offsetBy: 10)..<colon]),
                    detail: String(line[line.index(after: colon)...]).trimmingSpaces()))
        }
        if !sawEnd || child.status != 0 {
            violations.append(
                Violation(
                    invariant: Violation.opens,
                    detail: "the checking process ended with status \(child.status)"))
        }
        return violations
    }
}

extension DiskOperation {
    /// Whether the call changes something under `root` (a mark always
    /// counts): the calls a test keeps of a process doing other work too.
    func touches(under root: String) -> Bool {
        let paths: [String]
        switch self {
        case .create(let path, _), .write(let path, _, _), .truncate(let path, _),
            .sync(let path), .syncDirectory(let path), .unlink(let path),
            .makeDirectory(let path), .changeMode(let path, _), .changeOwner(let path, _, _):
            paths = [path]
        case .rename(let from, let to), .link(let from, let to): paths = [from, to]
        case .mark: return true
        }
        return paths.contains { $0 == root || $0.hasPrefix(root + "/") }
    }
}
