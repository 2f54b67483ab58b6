import Foundation
import Preferences

/// `prefs-bench --scaling`: how the cost of a store grows with its number of
/// keys (20, 1,000, 10,000, 100,000). Every `set` rewrites the whole
/// document, so its cost follows the file size; a read does not.
struct Scaling {
    let cases: Cases
    let sizes = [20, 1_000, 10_000, 100_000]
    let subscriberCounts = [1, 100, 1_000]

    struct Point: Codable {
        var keys: Int
        var fileBytes: Double
        var setNanoseconds: Double
        var floorNanoseconds: Double
        var openNanoseconds: Double
        var memoryBytes: Double
        /// Subscriber count → nanoseconds from the start of `set` until the
        /// last subscriber's loop ran with the new value.
        var deliveryNanoseconds: [Int: Double]
    }

    /// Fewer samples for bigger stores keep the run to a couple of minutes.
    func samples(_ keys: Int) -> Int {
        let full = keys <= 1_000 ? 31 : keys <= 10_000 ? 15 : 7
        return cases.quick ? max(3, full / 3) : full
    }

    func measure(keys: Int) async throws -> Point {
        let url = cases.file("scaling-\(keys).json")
        let contents = mixedValues(keys)
        try await cases.seed(url, contents)
        let fileBytes = Double(
            (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
        let rounds = samples(keys)

        // Open a copy of the file each time, so that no handle of this
        // process has it open already (which would be a cache hit).
        func copy(_ round: Int) throws -> URL {
            let copy = cases.file("scaling-\(keys)-copy-\(round).json")
            try FileManager.default.copyItem(at: url, to: copy)
            return copy
        }
        var opens: [Double] = []
        for round in 0..<rounds {
            let copied = try copy(round)
            opens.append(
                try await timeAsync {
                    let store = try await PreferencesStore(fileURL: copied, limits: Cases.noHistory)
                    precondition(store.snapshot.values.count == keys)
                })
        }

        // Memory of the open store, as P6 measures it (heap in use),
        // with several copies open at once so that pages the allocator kept
        // from earlier work, or rounding to pages, do not decide the result.
        let stores = keys <= 20 ? 200 : keys <= 1_000 ? 40 : keys <= 10_000 ? 8 : 2
        let copies = try (0..<stores).map { try copy(rounds + $0) }
        let before = heapBytesInUse() ?? 0
        var measured: [PreferencesStore] = []
        for copied in copies {
            measured.append(try await PreferencesStore(fileURL: copied, limits: Cases.noHistory))
        }
        let memory = Double(max(0, (heapBytesInUse() ?? 0) - before)) / Double(stores)
        withExtendedLifetime(measured) {}

        // One durable set, beside the durable replace of the same bytes.
        let store = try await PreferencesStore(fileURL: url, limits: Cases.noHistory)
        let floorURL = cases.file("scaling-\(keys)-floor.json")
        var sets: [Double] = []
        var floors: [Double] = []
        for index in 0..<rounds {
            sets.append(try await timeAsync { try await store.set(.benchCounter, index + 1) })
            let bytes = Array(try Data(contentsOf: url))
            floors.append(time { FloorWriter.replace(bytes, at: floorURL.path) })
        }

        // Delivery through `changes()`, on a store of the same size in memory,
        // so that no disk time is counted.
        var delivery: [Int: Double] = [:]
        for count in subscriberCounts {
            let memoryStore = try await PreferencesStore(
                storage: InMemoryStorage(), limits: Cases.noHistory)
            try await memoryStore.edit { prefs in
                for (key, value) in contents { prefs[raw: key] = value }
            }
            delivery[count] = try await deliveryTime(
                store: memoryStore, subscribers: count, rounds: max(3, rounds / 2))
        }

        return Point(
            keys: keys, fileBytes: fileBytes, setNanoseconds: median(sets),
            floorNanoseconds: median(floors), openNanoseconds: median(opens),
            memoryBytes: memory, deliveryNanoseconds: delivery)
    }

    /// The median time from the start of a `set` until all `subscribers`
    /// feeds of the key have yielded the new value.
    func deliveryTime(store: PreferencesStore, subscribers: Int, rounds: Int) async throws
        -> Double
    {
        // value → how many subscribers have seen it; the last one reports.
        let seen = SeenCounts()
        let (done, doneSignal) = AsyncStream<(Int, UInt64)>.makeStream()
        var consumers: [Task<Void, Never>] = []
        for _ in 0..<subscribers {
            let feed = store.changes(.benchCounter)
            consumers.append(
                Task {
                    for await value in feed {
                        let stamp = now()
                        let all = seen.counts.withLock { counts -> Bool in
                            counts[value, default: 0] += 1
                            return counts[value] == subscribers
                        }
                        if all { doneSignal.yield((value, stamp)) }
                    }
                })
        }
        defer { for consumer in consumers { consumer.cancel() } }
        var iterator = done.makeAsyncIterator()
        // Every feed starts with the current value.
        let first = store[.benchCounter]
        while let (value, _) = await iterator.next(), value != first {}
        var samples: [Double] = []
        for value in (first + 1)...(first + rounds) {
            let start = now()
            try await store.set(.benchCounter, value)
            while let (got, stamp) = await iterator.next() {
                if got == value {
                    samples.append(Double(stamp - start))
                    break
                }
            }
        }
        return median(samples)
    }

    func run(chartPath: String?, json: Bool) async throws {
        var points: [Point] = []
        for keys in sizes {
            FileHandle.standardError.write(Data("  scaling: \(keys) keys\n".utf8))
            points.append(try await measure(keys: keys))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(points), as: UTF8.self))
        } else {
            print(table(points))
        }
        if let chartPath {
            try Data(ScalingChart(points: points, subscriberCounts: subscriberCounts).svg().utf8)
                .write(to: URL(fileURLWithPath: chartPath))
            FileHandle.standardError.write(Data("  chart written to \(chartPath)\n".utf8))
        }
    }

    func table(_ points: [Point]) -> String {
        var lines = [
            "| keys | file | one set | floor | set ÷ floor | open | memory | memory ÷ file | "
                + subscriberCounts.map { "delivery to \($0)" }.joined(separator: " | ") + " |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|"
                + String(repeating: "---:|", count: subscriberCounts.count),
        ]
        for point in points {
            let cells = [
                point.keys.formatted(), format(bytes: point.fileBytes),
                format(nanoseconds: point.setNanoseconds),
                format(nanoseconds: point.floorNanoseconds),
                String(format: "%.2f×", point.setNanoseconds / point.floorNanoseconds),
                format(nanoseconds: point.openNanoseconds), format(bytes: point.memoryBytes),
                String(format: "%.2f×", point.memoryBytes / point.fileBytes),
            ]
            let deliveries = subscriberCounts.map {
                format(nanoseconds: point.deliveryNanoseconds[$0] ?? .nan)
            }
            lines.append("| " + (cells + deliveries).joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}

/// How many subscribers have seen each value.
final class SeenCounts: Sendable {
    let counts = Locked<[Int: Int]>([:])
}

/// Human units for a byte count.
func format(bytes: Double) -> String {
    if bytes < 1024 { return String(format: "%.0f B", bytes) }
    if bytes < 1024 * 1024 { return String(format: "%.0f KiB", bytes / 1024) }
    return String(format: "%.1f MiB", bytes / 1024 / 1024)
}

extension Int {
    /// With thousands separators: 10,000.
    func formatted() -> String {
        let digits = String(self)
        var out = ""
        for (position, character) in digits.enumerated() {
            if position > 0 && (digits.count - position) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}
