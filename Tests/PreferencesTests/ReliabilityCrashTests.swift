import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// SIGKILL at random moments of a write loop (<doc:Reliability>): after every kill
/// the file decodes, and every write the child acknowledged is in it; at
/// the end every acknowledged change has its history entry, sequence
/// numbers have no gap or repeat, and the entries chain from one value to
/// the next up to what the file holds (H1, H3, <doc:HistoryAndUndo>).
///
/// 100 kills in every `swift test`; 1,000 with `PREFS_RELIABILITY=full`.
@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 30))
struct ReliabilityCrashTests {
    @Test func killNineAtRandomMomentsLosesNoAcknowledgedWrite() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        var generator = SeededGenerator(state: Reliability.seed)
        var stored: Int64 = 0  // what the file held after the previous kill
        var acknowledged = 0
        var acknowledgedValues = Set<Int64>()
        var unacknowledgedButDurable = 0
        var killedBeforeFirstWrite = 0
        var survived = 0
        for round in 0..<Reliability.kills {
            let child = try RunningProcess("prefs-harness", ["write-loop", url.path, "counter"])
            // Most kills land while writes are in flight; every tenth lands at
            // a random moment of start-up (opening the store, the first write).
            var lines: [String] = []
            if round % 10 == 0 {
                try await Task.sleep(
                    for: .microseconds(Int.random(in: 0..<40_000, using: &generator)))
            } else {
                let first = try await child.nextLine()
                #expect(first?.hasPrefix("ack ") == true, "round \(round): \(first ?? "no output")")
                lines.append(first ?? "")
                try await Task.sleep(
                    for: .microseconds(Int.random(in: 0..<8_000, using: &generator)))
            }
            child.kill(SIGKILL)
            _ = try await child.exit()
            while let line = try await child.nextLine() { lines.append(line) }
            var highestAck: Int64 = 0
            for line in lines {
                if line.hasPrefix("ack "), let number = Int64(line.dropFirst(4)) {
                    highestAck = max(highestAck, number)
                    acknowledged += 1
                    acknowledgedValues.insert(number)
                }
            }
            let floor = max(stored, highestAck)
            let now: Int64
            do {
                now = try storedInteger("counter", in: url) ?? 0
            } catch let error as CocoaError where error.code == .fileReadNoSuchFile && floor == 0 {
                now = 0  // killed before the very first write
            } catch {
                Issue.record(
                    "round \(round) (seed \(Reliability.seed)): the file does not read: \(error)")
                break
            }
            // Acknowledged writes are all there; at most the one write in
            // flight when the signal came may have landed unannounced.
            #expect(
                now == floor || now == floor + 1,
                "round \(round) (seed \(Reliability.seed)): file holds \(now), acknowledged \(highestAck), before \(stored)"
            )
            guard now == floor || now == floor + 1 else { break }
            if now == floor + 1 { unacknowledgedButDurable += 1 }
            if now == stored { killedBeforeFirstWrite += 1 }
            stored = now
            survived += 1
        }
        // The write loop sets the counter one above what the file holds, so
        // every committed change moved it by one: its sequence is its value.
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        let history = try await store.history()
        #expect(history.latest == stored, "\(history.latest) changes for a counter at \(stored)")
        let kept = history.entries
        #expect(kept.count == min(1000, Int(stored)), "\(kept.count) entries kept")
        var previous: PreferenceValue? = kept.first?.changes["counter"]?.old
        for (offset, entry) in kept.enumerated() {
            #expect(
                entry.sequence == (kept.first?.sequence ?? 0) + Int64(offset),
                "a gap or repeat at #\(entry.sequence)")
            let change = entry.changes["counter"]
            #expect(
                change?.old == previous && change?.new == .int(entry.sequence),
                "#\(entry.sequence): \(entry)")
            previous = change?.new
        }
        #expect(previous == .int(stored) || stored == 0)
        let oldest = kept.first?.sequence ?? 1
        let missing = acknowledgedValues.filter { $0 >= oldest }.filter { value in
            !kept.contains { $0.sequence == value }
        }
        #expect(
            missing.isEmpty, "acknowledged changes without an entry: \(missing.sorted().prefix(5))")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".tmp") }.count
        Reliability.report(
            "crash: \(survived)/\(Reliability.kills) kills survived, file readable every time, "
                + "\(acknowledged) acknowledged writes all present, final value \(stored), "
                + "\(unacknowledgedButDurable) kills landed after a write was durable but before its ack, "
                + "history: \(kept.count) entries kept up to #\(history.latest), no gap, each acknowledged one present, "
                + "\(killedBeforeFirstWrite) before a write landed, \(leftovers) orphaned temp files, "
                + "seed \(Reliability.seed)")
        #expect(survived == Reliability.kills)
    }
}
