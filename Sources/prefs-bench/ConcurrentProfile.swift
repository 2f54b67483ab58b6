import Foundation
import Preferences

/// `--profile-concurrent N`: P3's rounds, taken apart.
///
/// Each round is the work P3 measures — 1,000 child tasks, each one
/// `edit` of its own key — with each transform noting when it ran and each
/// task noting when its `edit` returned. Transforms run one after another on
/// the store's queue, a group at a time; between two groups the store either
/// wrote (a durable write takes at least one fsync, hundreds of
/// microseconds) or encoded its document again to take in the edits queued
/// meanwhile, so a pause of more than ``batchGap`` between two transforms
/// ends a group. The writes themselves are counted from the write
/// generation the store keeps in the first 8 bytes of `<file>.lock`. Per
/// round it prints the number of writes, the groups' sizes, how long each
/// pause took, and how the round's time splits into: starting the tasks
/// until the first transform, the pauses, and the last transform until the
/// last `edit` returned.
///
/// With `--plain`, the rounds are exactly P3's, with no notes taken (for
/// instruction counts with valgrind's callgrind: take the difference of two
/// runs with different round counts). With `--baseline`, the tasks do no
/// edit: what the task group alone costs, to subtract. With `--held MS`,
/// an edit that changes nothing (so writes nothing) holds the store's queue
/// while the 1,000 edits are queued and for MS milliseconds more, so each
/// round is exactly one write of all 1,000: instruction counts per round
/// that do not depend on how the threads happened to interleave. With
/// `--serial`, each round is 50 one-edit writes on the 1,020-key store (the
/// cost of P3's first write of a round, which carries one edit).
struct ConcurrentProfile {
    enum Mode {
        case timeline, plain, baseline
        case held(milliseconds: Int)
        /// Each round is 50 `edit`s one after another on the 1,020-key
        /// store: 50 writes of one edit each, as P3's first write of a round.
        case serial
    }

    let cases: Cases
    let rounds: Int
    let mode: Mode

    /// A pause between two transforms longer than this ends a group.
    static let batchGap: UInt64 = 150_000

    /// The write generation the store keeps in the first 8 bytes of
    /// `<file>.lock` (little-endian): one more for every write.
    static func writeGeneration(of url: URL) -> UInt64 {
        guard let handle = FileHandle(forReadingAtPath: url.path + ".lock"),
            let bytes = try? handle.read(upToCount: 8), bytes.count == 8
        else { return 0 }
        try? handle.close()
        return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// When each transform ran and each `edit` returned, by task index.
    final class Timeline: Sendable {
        let applied = Locked<[UInt64]>([])
        let returned = Locked<[UInt64]>([])

        init(count: Int) {
            applied.withLock { $0 = Array(repeating: 0, count: count) }
            returned.withLock { $0 = Array(repeating: 0, count: count) }
        }
    }

    func run() async throws {
        let url = cases.file("profile-p3.json")
        try await cases.seed(url, concurrentSetValues())
        let store = try await PreferencesStore(
            fileURL: url, limits: Cases.noHistory,
            liveReads: ProcessInfo.processInfo.environment["NOLIVE"] == nil)
        var totals: [Double] = []
        var writeCounts: [Int] = []
        for round in 0..<rounds {
            if case .serial = mode {
                let start = now()
                for index in 0..<50 {
                    try await store.edit { $0[raw: "c\(index)"] = .int(Int64(round)) }
                }
                print("round \(round): \(format(nanoseconds: Double(now() - start)))")
                continue
            }
            let timeline = Timeline(count: 1000)
            let generationBefore = Self.writeGeneration(of: url)
            let (start, end) = try await editConcurrently(round, store: store, timeline: timeline)
            totals.append(Double(end - start))
            guard case .timeline = mode else {
                print("round \(round): \(format(nanoseconds: Double(end - start)))")
                continue
            }
            let writes = Int(Self.writeGeneration(of: url) &- generationBefore)
            writeCounts.append(writes)
            printTimeline(timeline, round: round, start: start, end: end, writes: writes)
        }
        print(
            "median round \(format(nanoseconds: median(totals)))"
                + (writeCounts.isEmpty ? "" : ", writes per round \(writeCounts)"))
    }

    /// One round: 1,000 tasks, each an `edit` of its own key (none with
    /// `--baseline`), noted in `timeline` in the timeline mode; with
    /// `--held`, with the store's queue held while they are queued. Returns
    /// when the round started and ended.
    func editConcurrently(_ round: Int, store: PreferencesStore, timeline: Timeline) async throws
        -> (start: UInt64, end: UInt64)
    {
        var gate: DispatchSemaphore?
        var holder: Task<Void, any Error>?
        if case .held = mode {
            let (started, running) = AsyncStream<Void>.makeStream()
            let held = DispatchSemaphore(value: 0)
            // Blocks the store's queue (a dispatch thread, not Swift's pool).
            holder = Task {
                try await store.edit { _ in
                    running.yield(); held.wait()
                }
            }
            for await _ in started { break }
            gate = held
        }
        let start = now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<1000 {
                switch mode {
                case .plain, .held, .serial:
                    group.addTask {
                        try await store.edit { $0[raw: "c\(index)"] = .int(Int64(round)) }
                    }
                case .baseline:
                    group.addTask {}
                case .timeline:
                    group.addTask {
                        try await store.edit {
                            $0[raw: "c\(index)"] = .int(Int64(round))
                            let at = now()
                            timeline.applied.withLock { $0[index] = at }
                        }
                        let at = now()
                        timeline.returned.withLock { $0[index] = at }
                    }
                }
            }
            if case .held(let milliseconds) = mode {
                try await Task.sleep(for: .milliseconds(milliseconds))
                gate?.signal()
            }
            try await group.waitForAll()
        }
        try await holder?.value
        return (start, now())
    }

    /// Prints how round `round`'s time split: its transform groups, the
    /// pauses between them, and the spans before and after.
    func printTimeline(_ timeline: Timeline, round: Int, start: UInt64, end: UInt64, writes: Int) {
        let appliedByTask = timeline.applied.withLock { $0 }
        let applied = appliedByTask.sorted()
        let returned = timeline.returned.withLock { $0 }
        var groups: [Int] = [1]
        var pauses: [UInt64] = []
        for position in 1..<applied.count {
            let gap = applied[position] - applied[position - 1]
            if gap > Self.batchGap {
                groups.append(1)
                pauses.append(gap)
            } else {
                groups[groups.count - 1] += 1
            }
        }
        let first = applied.first ?? start
        let lastReturn = returned.max() ?? end
        let lastApplied = applied.last ?? end
        // The last write ends about when the first of its own edits
        // returns (edits of the write before may still be returning).
        let lastGroupStart = applied[applied.count - groups[groups.count - 1]]
        let lastWritten =
            zip(appliedByTask, returned).filter { $0.0 >= lastGroupStart }.map(\.1).min()
            ?? lastReturn
        let spans = [
            "to first transform \(format(nanoseconds: Double(first - start)))",
            "pauses between groups \(pauses.map { format(nanoseconds: Double($0)) })",
            "last transform to write done \(format(nanoseconds: Double(lastWritten - lastApplied)))",
            "then returns for \(format(nanoseconds: Double(lastReturn - lastWritten)))",
        ]
        print(
            "round \(round): \(format(nanoseconds: Double(end - start))), \(writes) writes, transform groups \(groups); "
                + spans.joined(separator: "; "))
    }
}
