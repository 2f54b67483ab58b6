// P13: swift-configuration's ConfigReader over PreferencesProvider.
//
//   swift run -c release preferences-configuration-bench [--quick]
//
// 1. `ConfigReader.int(forKey:)` through the provider, side by side with
//    swift-configuration's `InMemoryProvider` holding the same 20 values:
//    the median of paired rounds' ratios.
// 2. A `prefs set` run in another process, to the provider's watch
//    (`ConfigReader.watchInt`) yielding the value: p50 and p90 of the delay
//    after the `prefs` process returned (0 when the watch yielded first),
//    and from the process's start.
//
// The store is a file store as users get it by default (history on).

import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import Synchronization

func median(_ samples: [Double]) -> Double { percentile(samples, 0.5) }

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func milliseconds(_ nanoseconds: Double) -> String {
    String(format: "%.2f ms", nanoseconds / 1_000_000)
}

/// The `prefs` built beside this program.
func prefsPath() throws -> String {
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let prefs = me.deletingLastPathComponent().appendingPathComponent("prefs").path
    guard FileManager.default.isExecutableFile(atPath: prefs) else {
        throw BenchFailure("no prefs beside \(me.path): build it with `swift build -c release`")
    }
    return prefs
}

// MARK: Reads

/// Nanoseconds per `config.int(forKey:)` over `reads` reads of the 20 keys in turn.
func timeReads(_ config: ConfigReader, keys: [ConfigKey], reads: Int) -> (Double, Int) {
    var sum = 0
    let start = now()
    for index in 0..<reads {
        sum &+= config.int(forKey: keys[index % keys.count]) ?? 0
    }
    return (Double(now() - start) / Double(reads), sum)
}

/// Prints the read row: our reads' time beside `InMemoryProvider`'s.
func measureReads(_ ours: ConfigReader, quick: Bool) {
    var memoryValues: [AbsoluteConfigKey: ConfigValue] = [:]
    for index in 0..<20 {
        memoryValues[["service", "setting\(index)"]] = ConfigValue(.int(index), isSecret: false)
    }
    let inMemory = ConfigReader(provider: InMemoryProvider(values: memoryValues))
    let keys = (0..<20).map { ConfigKey("service.setting\($0)") }

    let rounds = quick ? 5 : 21
    let reads = quick ? 20_000 : 200_000
    var ratios: [Double] = []
    var oursSamples: [Double] = []
    var memorySamples: [Double] = []
    var checksum = 0
    _ = timeReads(ours, keys: keys, reads: reads / 10)  // warm up
    _ = timeReads(inMemory, keys: keys, reads: reads / 10)
    for round in 0..<rounds {
        // Alternate which goes first, so neither always runs on a warmer cache.
        let first = round % 2 == 0
        let (a, sumA) = timeReads(first ? ours : inMemory, keys: keys, reads: reads)
        let (b, sumB) = timeReads(first ? inMemory : ours, keys: keys, reads: reads)
        let (oursTime, memoryTime) = first ? (a, b) : (b, a)
        checksum &+= sumA &+ sumB
        oursSamples.append(oursTime)
        memorySamples.append(memoryTime)
        ratios.append(oursTime / memoryTime)
    }
    let readRatio = median(ratios)
    print(
        String(
            format:
                "P13 read: ConfigReader.int(forKey:) %.0f ns through PreferencesProvider, %.0f ns through InMemoryProvider: %.2f× (target ≤ 1.5×) [%d rounds of %d reads, paired; checksum %d]",
            median(oursSamples), median(memorySamples), readRatio, rounds, reads, checksum))
}

// MARK: Delivery

/// Prints the delivery row: `prefs set` on `fileURL` to `ours`' watch.
func measureDelivery(_ ours: ConfigReader, fileURL: URL, quick: Bool) async throws {
    let prefs = try prefsPath()
    let samples = quick ? 20 : 100
    let yielded = Mutex<[Int: UInt64]>([:])
    let (arrivals, arrival) = AsyncStream<Int>.makeStream()
    let watcher = Task {
        try await ours.watchInt(forKey: "bench.counter", default: -1) { updates in
            for await value in updates {
                let at = now()
                yielded.withLock { $0[value] = at }
                arrival.yield(value)
            }
        }
    }
    var arrived = arrivals.makeAsyncIterator()
    // The watch's first value: the key is not set yet.
    guard await arrived.next() == -1 else {
        throw BenchFailure("the watch did not start at the default")
    }

    var afterReturn: [Double] = []
    var fromStart: [Double] = []
    var signed: [Double] = []
    for value in 1...samples {
        let (started, returned) = try spawnAndWait(
            prefs, ["--file", fileURL.path, "set", "bench.counter", "\(value)"])
        while let next = await arrived.next(), next != value {}
        guard let at = yielded.withLock({ $0[value] }) else {
            throw BenchFailure("the watch ended before yielding \(value)")
        }
        afterReturn.append(at > returned ? Double(at - returned) : 0)
        fromStart.append(Double(at - started))
        signed.append(Double(at) - Double(returned))
    }
    watcher.cancel()
    let early = afterReturn.filter { $0 == 0 }.count
    print(
        "P13 delivery: prefs set (another process) → watchInt yielded: after prefs returned p50 \(milliseconds(median(afterReturn))), p90 \(milliseconds(percentile(afterReturn, 0.9))) (target p50 ≤ 5 ms; \(early) of \(samples) yielded before prefs returned; the yield's time minus the return's p50 \(milliseconds(median(signed))), p90 \(milliseconds(percentile(signed, 0.9)))); from the process's start p50 \(milliseconds(median(fromStart))), p90 \(milliseconds(percentile(fromStart, 0.9)))"
    )
}

/// The 20 values both providers hold.
let values: [String: PreferenceValue] = Dictionary(
    uniqueKeysWithValues: (0..<20).map { ("service.setting\($0)", .int(Int64($0))) })

let quick = CommandLine.arguments.contains("--quick")
let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("preferences-configuration-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let fileURL = directory.appendingPathComponent("service.json")
let store = try await PreferencesStore(fileURL: fileURL)
try await store.edit { try $0.merge(values) }
let ours = ConfigReader(provider: PreferencesProvider(store: store))
measureReads(ours, quick: quick)
try await measureDelivery(ours, fileURL: fileURL, quick: quick)
