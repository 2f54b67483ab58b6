import Foundation
import Preferences

/// The whole run: the rows, `--scaling`, the profiling modes, and the
/// `--writer` child of P5 and `--temporary-writer` child of A4.
func runBench() async throws {
    let arguments = Array(CommandLine.arguments.dropFirst())

    if arguments.first == "--writer" {
        // Child for P5: for each number read on stdin, print the wall clock and
        // set it.
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
        // Child for A4.
        try await runTemporaryWriter(path: arguments[1])
        exit(0)
    }

    if arguments.contains("--help") {
        print(
            "usage: prefs-bench [--quick] [--json] [--only P2,P3,...] [--prefs PATH] [--scaling [--chart FILE]]"
        )
        exit(0)
    }

    let quick = arguments.contains("--quick")
    let json = arguments.contains("--json")
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("prefs-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    // Keep UserDefaults' files inside the scratch directory.
    setenv("XDG_CONFIG_HOME", directory.path, 1)
    setenv("HOME", directory.path, 1)

    let cases = Cases(directory: directory, quick: quick)
    var rows: [Row] = []
    func report(_ row: Row) {
        rows.append(row)
        if !json {
            FileHandle.standardError.write(Data("  \(row.id) \(row.measure): \(row.ours)\n".utf8))
        }
    }
    if let position = arguments.firstIndex(of: "--profile-cold") {
        let count =
            arguments.indices.contains(position + 1) ? Int(arguments[position + 1]) ?? 1000 : 1000
        try await cases.profileColdStart(count: count)
        exit(0)
    }

    if let position = arguments.firstIndex(of: "--profile-import") {
        let count =
            arguments.indices.contains(position + 1) ? Int(arguments[position + 1]) ?? 10 : 10
        try await cases.profileImport(count: count)
        exit(0)
    }

    if let position = arguments.firstIndex(of: "--profile-concurrent") {
        let count =
            arguments.indices.contains(position + 1) ? Int(arguments[position + 1]) ?? 7 : 7
        var mode = ConcurrentProfile.Mode.timeline
        if arguments.contains("--baseline") { mode = .baseline }
        if arguments.contains("--plain") { mode = .plain }
        if arguments.contains("--serial") { mode = .serial }
        if let held = arguments.firstIndex(of: "--held") {
            let milliseconds = arguments.indices.contains(held + 1) ? Int(arguments[held + 1]) : nil
            mode = .held(milliseconds: milliseconds ?? 50)
        }
        try await ConcurrentProfile(cases: cases, rounds: count, mode: mode).run()
        exit(0)
    }

    if arguments.contains("--scaling") {
        let chart = arguments.firstIndex(of: "--chart").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        try await Scaling(cases: cases).run(chartPath: chart ?? "scaling.svg", json: json)
        exit(0)
    }

    // `--only P3,P4` runs some rows.
    let only: Set<String>? = arguments.firstIndex(of: "--only").flatMap { position in
        arguments.indices.contains(position + 1)
            ? Set(arguments[position + 1].split(separator: ",").map(String.init)) : nil
    }
    func selected(_ id: String) -> Bool { only?.contains(id) ?? true }

    if selected("P1") { report(try await cases.cachedRead()) }
    if selected("P2") { report(try await cases.durableSet()) }
    if selected("P3") { report(try await cases.concurrentSets()) }
    if selected("P4") { report(try await cases.openBigStore()) }
    if selected("P5") {
        report(
            try await cases.changeDelivery(
                benchPath: URL(fileURLWithPath: CommandLine.arguments[0]).path))
    }
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
    if selected("A4") {
        report(
            try await cases.temporaryEnd(
                benchPath: URL(fileURLWithPath: CommandLine.arguments[0]).path))
    }
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

    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(rows), as: UTF8.self))
    } else {
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
    if let position = arguments.firstIndex(of: "--prefs"), arguments.indices.contains(position + 1)
    {
        let given = URL(fileURLWithPath: arguments[position + 1])
        return FileManager.default.isExecutableFile(atPath: given.path) ? given : nil
    }
    let installed = URL(fileURLWithPath: ".build/install/release/prefs").standardizedFileURL
    if FileManager.default.isExecutableFile(atPath: installed.path) { return installed }
    return besideBench("prefs")
}
