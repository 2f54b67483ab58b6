// prefs-bench: measures Preferences against Foundation's UserDefaults, the
// hand-rolled JSONEncoder + atomic write, and the durable-replace floor, in
// one run, as ratios (SPEC §9).
//
//   swift run -c release prefs-bench [--quick] [--json]
import Foundation
import Preferences

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--writer" {
    // Child for P5: for each number read on stdin, print the wall clock and
    // set it.
    let url = URL(fileURLWithPath: arguments[1])
    let store = try await PreferencesStore(fileURL: url)
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    while let line = readLine(), let value = Int(line) {
        FileHandle.standardOutput.write(Data("\(wallClock())\n".utf8))
        try await store.set(.benchCounter, value)
    }
    exit(0)
}

if arguments.contains("--help") {
    print("usage: prefs-bench [--quick] [--json]")
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
@MainActor func report(_ row: Row) {
    rows.append(row)
    if !json {
        FileHandle.standardError.write(Data("  \(row.id) \(row.measure): \(row.ours)\n".utf8))
    }
}
report(try await cases.cachedRead())
let (setRow, oneSet) = try await cases.durableSet()
report(setRow)
report(try await cases.concurrentSets(oneSet: oneSet))
report(try await cases.openBigStore())
report(
    try await cases.changeDelivery(benchPath: URL(fileURLWithPath: CommandLine.arguments[0]).path))
report(try await cases.memory())
report(try await cases.importProperties())
report(try await cases.coldStart())
report(try await cases.etcd())

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
