import Foundation
import Preferences

/// A4: how late a change feed delivers the end of a temporary value
/// (`<doc:ChangingSettingsSafely>`): a value set for 300 ms, then the time
/// from its end (`snapshot.temporaryValueEnd(forKey:)`) to the feed's
/// delivery of the earlier value. Set by this process, and by another
/// process (the `--temporary-writer` child, as `prefs set --for` is), whose
/// change this process reads through its watch and then ends by its own
/// clock.
extension Cases {
    func temporaryEnd(benchPath: String) async throws -> Row {
        let url = file("a4.json")
        try await seed(url, twentyValues())
        let store = try await PreferencesStore(fileURL: url, limits: Self.noHistory)
        try await store.set(.benchCounter, -1)
        let rounds = quick ? 10 : 40
        var local: [Double] = []
        var iterator = store.changes(.benchCounter).makeAsyncIterator()
        _ = await iterator.next()
        for round in 0..<rounds {
            try await store.set(.benchCounter, round, for: .milliseconds(300))
            local.append(try await lateness(of: round, store, &iterator))
        }

        let child = try BenchChild(
            benchPath, ["--temporary-writer", url.path], input: .pipe, output: .pipe)
        guard let input = child.input, let output = child.output else {
            throw BenchFailure("no pipes to the --temporary-writer child")
        }
        defer {
            try? input.close()
            _ = child.wait()
        }
        _ = output.readData(ofLength: 6)  // "ready\n"
        var other: [Double] = []
        for round in rounds..<(2 * rounds) {
            input.write(Data("\(round)\n".utf8))
            other.append(try await lateness(of: round, store, &iterator))
        }
        let worst = max(local.max() ?? 0, other.max() ?? 0)
        return Row(
            id: "A4", measure: "a temporary value's end, delivered by a feed (p50)",
            ours:
                "set here \(format(nanoseconds: median(local))); set by another process \(format(nanoseconds: median(other)))",
            comparison:
                "max set here \(format(nanoseconds: local.max() ?? 0)); max set by another process \(format(nanoseconds: other.max() ?? 0))",
            ratio: nil, target: "within 100 ms of the end", met: worst <= 100_000_000,
            detail: [
                "local_p50_ns": median(local), "other_p50_ns": median(other),
                "max_ns": worst,
            ])
    }

    /// Nanoseconds from the end of the temporary value `value` to the
    /// feed's delivery of the value after it (-1, the counter's value
    /// before every round).
    private func lateness(
        of value: Int, _ store: PreferencesStore,
        _ iterator: inout AsyncStream<Int>.Iterator
    ) async throws -> Double {
        var end: Date?
        while let delivered = await iterator.next() {
            if delivered == value {
                end = store.snapshot.temporaryValueEnd(forKey: PreferenceKeys.benchCounter.name)
            } else if delivered == -1, let end {
                return max(0, Date().timeIntervalSince(end)) * 1e9
            }
        }
        throw BenchFailure("the feed ended while waiting for the end of \(value)")
    }
}

/// The child of A4: for each number read on stdin, sets it for 300 ms.
func runTemporaryWriter(path: String) async throws {
    let store = try await PreferencesStore(
        fileURL: URL(fileURLWithPath: path), limits: Cases.noHistory)
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    while let line = readLine(), let value = Int(line) {
        try await store.set(.benchCounter, value, for: .milliseconds(300))
    }
}
