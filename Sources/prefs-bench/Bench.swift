import Foundation
import Preferences

/// The whole run: the rows, `--scaling`, the profiling modes, and the
/// `--writer` child of P5 and `--temporary-writer` child of A4.
func runBench() async throws {
    let arguments = Array(CommandLine.arguments.dropFirst())
    try await runChild(arguments)
    if arguments.contains("--help") {
        print(
            "usage: prefs-bench [--quick] [--json] [--only P2,P3,...] [--prefs PATH] [--scaling [--chart FILE]]"
        )
        exit(0)
    }

    let json = arguments.contains("--json")
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("prefs-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    // Keep UserDefaults' files inside the scratch directory.
    setenv("XDG_CONFIG_HOME", directory.path, 1)
    setenv("HOME", directory.path, 1)

    let cases = Cases(directory: directory, quick: arguments.contains("--quick"))
    try await runProfile(arguments, cases: cases)
    if arguments.contains("--scaling") {
        let chart = arguments.operand(of: "--chart") ?? "scaling.svg"
        try await Scaling(cases: cases).run(chartPath: chart, json: json)
        exit(0)
    }
    // `--only P3,P4` runs some rows.
    let only = arguments.operand(of: "--only").map {
        Set($0.split(separator: ",").map(String.init))
    }
    let rows = try await measureRows(only, cases: cases, arguments: arguments) { row in
        if !json {
            FileHandle.standardError.write(Data("  \(row.id) \(row.measure): \(row.ours)\n".utf8))
        }
    }
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(rows), as: UTF8.self))
    } else {
        printTable(rows)
    }
}

/// `--writer FILE` (P5's child: for each number read on stdin, print the
/// wall clock and set it) and `--temporary-writer FILE` (A4's child) run,
/// then exit; any other command line returns.
func runChild(_ arguments: [String]) async throws {
    if arguments.first == "--writer" {
        let url = URL(fileURLWithPath: arguments[1])
        let store = try await PreferencesStore(fileURL: url, limits: Cases.noHistory)
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while let line = readLine(), let value = Int(line) {
            FileHandle.standardOutput.write(Data("\(wallClock())\n".utf8))
            try await store.set(.benchCounter, value)
        }
        exit(0)
    }
    if arguments.first == "--temporary-writer" {
        try await runTemporaryWriter(path: arguments[1])
        exit(0)
    }
}

/// `--profile-cold N`, `--profile-import N` and `--profile-concurrent N`
/// (for a profiler) run, then exit; any other command line returns.
func runProfile(_ arguments: [String], cases: Cases) async throws {
    if arguments.contains("--profile-cold") {
        try await cases.profileColdStart(
            count: arguments.operand(of: "--profile-cold").flatMap { Int($0) } ?? 1000)
        exit(0)
    }
    if arguments.contains("--profile-import") {
        try await cases.profileImport(
            count: arguments.operand(of: "--profile-import").flatMap { Int($0) } ?? 10)
        exit(0)
    }
    if arguments.contains("--profile-concurrent") {
        let count = arguments.operand(of: "--profile-concurrent").flatMap { Int($0) } ?? 7
        var mode = ConcurrentProfile.Mode.timeline
        if arguments.contains("--baseline") { mode = .baseline }
        if arguments.contains("--plain") { mode = .plain }
        if arguments.contains("--serial") { mode = .serial }
        if arguments.contains("--held") {
            mode = .held(milliseconds: arguments.operand(of: "--held").flatMap { Int($0) } ?? 50)
        }
        try await ConcurrentProfile(cases: cases, rounds: count, mode: mode).run()
        exit(0)
    }
}

/// Measures the rows in `only` (all if nil), in order, passing each to
/// `measured` as it is done.
func measureRows(
    _ only: Set<String>?, cases: Cases, arguments: [String], measured: (Row) -> Void
) async throws -> [Row] {
    var rows: [Row] = []
    func report(_ row: Row) {
        rows.append(row)
        measured(row)
    }
    func selected(_ id: String) -> Bool { only?.contains(id) ?? true }
    let benchPath = URL(fileURLWithPath: CommandLine.arguments[0]).path
    if selected("P1") { report(try await cases.cachedRead()) }
    if selected("P2") { report(try await cases.durableSet()) }
    if selected("P3") { report(try await cases.concurrentSets()) }
    if selected("P4") { report(try await cases.openBigStore()) }
    if selected("P5") { report(try await cases.changeDelivery(benchPath: benchPath)) }
    if selected("P6") { report(try await cases.memory()) }
    if selected("P7") { report(try await cases.importProperties()) }
    if selected("P8") { report(try await cases.coldStart()) }
    if selected("P9") { report(try await cases.etcd()) }
    if selected("P10") {
        let prefs = besideBench("prefs")
        if prefs == nil {
            FileHandle.standardError.write(
                Data("  P10 prefs log: no prefs beside prefs-bench (swift build -c release)\n".utf8)
            )
        }
        for row in try await cases.history(prefs: prefs) { report(row) }
    }
    if selected("A4") { report(try await cases.temporaryEnd(benchPath: benchPath)) }
    if selected("P11") {
        for row in try await cases.replicas(harness: besideBench("prefs-harness")) { report(row) }
    }
    if selected("P12") {
        let harness = besideBench("prefs-harness")
        for row in try await cases.processStart(prefs: installedPrefs(arguments), harness: harness)
        {
            report(row)
        }
    }
    return rows
}

/// The rows as a Markdown table.
func printTable(_ rows: [Row]) {
    print("| # | measure | Preferences | compared with | ratio | target | met |")
    print("|---|---|---|---|---|---|---|")
    for row in rows {
        let ratio = row.ratio.map { String(format: "%.2f×", $0) } ?? "—"
        let met = row.met.map { $0 ? "yes" : "**no**" } ?? "n/a"
        print(
            "| \(row.id) | \(row.measure) | \(row.ours) | \(row.comparison) | \(ratio) | \(row.target) | \(met) |"
        )
    }
}

extension [String] {
    /// The argument after `flag`, or nil if `flag` is absent or last.
    func operand(of flag: String) -> String? {
        firstIndex(of: flag).flatMap { indices.contains($0 + 1) ? self[$0 + 1] : nil }
    }
}

/// A program `swift build -c release` builds beside this one, or nil.
func besideBench(_ name: String) -> URL? {
    let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent(name)
    return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
}

/// The `prefs` P12 measures, as it is installed: `--prefs PATH`, else the
/// build `scripts/install.sh --build-only` leaves in `.build/install` (run
/// from the package's directory), else the `prefs` beside this program.
func installedPrefs(_ arguments: [String]) -> URL? {
    if let path = arguments.operand(of: "--prefs") {
        let given = URL(fileURLWithPath: path)
        return FileManager.default.isExecutableFile(atPath: given.path) ? given : nil
    }
    let installed = URL(fileURLWithPath: ".build/install/release/prefs").standardizedFileURL
    if FileManager.default.isExecutableFile(atPath: installed.path) { return installed }
    return besideBench("prefs")
}
