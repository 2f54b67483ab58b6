import Foundation
import Preferences

/// One row of the results table.
struct Row: Codable {
    var id: String
    var measure: String
    var ours: String
    var comparison: String
    var ratio: Double?
    var target: String
    var met: Bool?
    var detail: [String: Double] = [:]
}

extension PreferenceKeys {
    static let benchFlag = PreferenceKey<Bool>("flag", default: false)
    static let benchCounter = PreferenceKey<Int>("counter", default: 0)
}

/// The twenty values of a small store.
func twentyValues() -> [String: PreferenceValue] {
    var values: [String: PreferenceValue] = [:]
    for index in 0..<19 { values["key_\(index)"] = .string("value number \(index)") }
    values["flag"] = .bool(true)
    return values
}

/// P3's store: the 20 keys, and the 1,000 (`c0` to `c999`) its rounds set.
func concurrentSetValues() -> [String: PreferenceValue] {
    var values = twentyValues()
    for index in 0..<1000 { values["c\(index)"] = .int(-1) }
    return values
}

/// The values of a store with `count` keys, a mix of strings, ints,
/// doubles and bools (P4's store, and the scaling's).
func mixedValues(_ count: Int) -> [String: PreferenceValue] {
    var values: [String: PreferenceValue] = [:]
    values.reserveCapacity(count)
    for index in 0..<count {
        switch index % 4 {
        case 0: values["setting.\(index)"] = .string("value \(index)")
        case 1: values["setting.\(index)"] = .int(Int64(index))
        case 2: values["setting.\(index)"] = .double(Double(index) / 7)
        default: values["setting.\(index)"] = .bool(index % 3 == 0)
        }
    }
    return values
}

struct Cases {
    let directory: URL
    let quick: Bool

    var iterations: Int { quick ? 50 : 300 }

    func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Limits without history: the rows P1 and P3 to P9 measure the store
    /// as it was targeted, and P10 measures what history adds.
    static let noHistory: PreferencesLimits = {
        var limits = PreferencesLimits()
        limits.history = .off
        return limits
    }()

    func seed(
        _ url: URL, _ values: [String: PreferenceValue], limits: PreferencesLimits = noHistory
    )
        async throws
    {
        let store = try await PreferencesStore(fileURL: url, limits: limits)
        try await store.edit { prefs in
            for (key, value) in values { prefs[raw: key] = value }
        }
    }

    // P1
    func cachedRead() async throws -> Row {
        let url = file("p1.json")
        try await seed(url, twentyValues())
        let store = try await PreferencesStore(fileURL: url, limits: Cases.noHistory)
        let defaults = UserDefaults(suiteName: "prefs-bench-p1")!
        defaults.set(true, forKey: "flag")
        let count = quick ? 200_000 : 2_000_000
        var ours: [Double] = []
        var theirs: [Double] = []
        var hits = 0
        for _ in 0..<5 {
            ours.append(
                time {
                    for _ in 0..<count where store[.benchFlag] { hits += 1 }
                } / Double(count))
            theirs.append(
                time {
                    for _ in 0..<count where defaults.bool(forKey: "flag") { hits += 1 }
                } / Double(count))
        }
        precondition(hits == 10 * count)
        let ratio = pairedRatio(theirs, ours)
        return Row(
            id: "P1", measure: "cached typed read", ours: format(nanoseconds: median(ours)),
            comparison: "UserDefaults.bool(forKey:) \(format(nanoseconds: median(theirs)))",
            ratio: ratio, target: "≥ 15× faster", met: ratio >= 15,
            detail: ["ours_ns": median(ours), "userdefaults_ns": median(theirs)])
    }

    // P2
    /// On the store as `PreferencesStore(fileURL:)` opens it by default
    /// (history kept, live reads on), against the floor writing the same
    /// bytes, its history included.
    func durableSet() async throws -> Row {
        let url = file("p2.json")
        try await seed(url, twentyValues(), limits: PreferencesLimits())
        let store = try await PreferencesStore(fileURL: url)
        let floorURL = file("p2-floor.json")
        let codableURL = file("p2-codable.json")
        let defaults = UserDefaults(suiteName: "prefs-bench-p2")!
        var ours: [Double] = []
        var floor: [Double] = []
        var codable: [Double] = []
        var userDefaults: [Double] = []
        var values = twentyValues()
        for index in 0..<iterations {
            ours.append(try await timeAsync { try await store.set(.benchCounter, index) })
            values["counter"] = .int(Int64(index))
            let bytes = Array(try Data(contentsOf: url))
            floor.append(time { FloorWriter.replace(bytes, at: floorURL.path) })
            let plain = values.mapValues { $0.jsonText }
            codable.append(
                try time {
                    let data = try JSONEncoder().encode(plain)
                    try data.write(to: codableURL, options: .atomic)
                })
            userDefaults.append(
                time {
                    defaults.set(index, forKey: "counter")
                    defaults.synchronize()
                })
        }
        let ratio = pairedRatio(ours, floor)
        return Row(
            id: "P2", measure: "one durable set, 20-key store (default: history, live reads)",
            ours: format(nanoseconds: median(ours)),
            comparison:
                "floor \(format(nanoseconds: median(floor))); UserDefaults+synchronize \(format(nanoseconds: median(userDefaults))) (not durable); JSONEncoder+atomic write \(format(nanoseconds: median(codable))) (no fsync)",
            ratio: ratio, target: "≤ 1.2× the floor", met: ratio <= 1.2,
            detail: [
                "ours_ns": median(ours), "floor_ns": median(floor),
                "userdefaults_ns": median(userDefaults), "codable_ns": median(codable),
            ])
    }

    // P3
    /// 1,000 `edit`s from 1,000 child tasks at once, each of its own key, on
    /// a store of 1,020 keys (20, and the 1,000 the rounds set), against one
    /// `set` on the same store — taken between the rounds (five before
    /// each), so both sides of the ratio write the same file and see the
    /// disk as it is at the time. Beside it, one `set` on a 20-key store,
    /// which P3 was compared with before this release: a 1,020-key file takes
    /// longer to write than a 20-key one whatever the library does, so that
    /// ratio measures the file's size as much as group commit.
    func concurrentSets() async throws -> Row {
        let url = file("p3.json")
        try await seed(url, concurrentSetValues())
        let store = try await PreferencesStore(fileURL: url, limits: Cases.noHistory)
        let smallURL = file("p3-small.json")
        try await seed(smallURL, twentyValues())
        let small = try await PreferencesStore(fileURL: smallURL, limits: Cases.noHistory)
        var samples: [Double] = []
        var singles: [Double] = []
        var smallSingles: [Double] = []
        for round in 0..<(quick ? 5 : 15) {
            for index in 0..<5 {
                singles.append(
                    try await timeAsync {
                        try await store.set(.benchCounter, round * 5 + index)
                    })
                smallSingles.append(
                    try await timeAsync {
                        try await small.set(.benchCounter, round * 5 + index)
                    })
            }
            samples.append(
                try await timeAsync {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<1000 {
                            group.addTask {
                                try await store.edit { $0[raw: "c\(index)"] = .int(Int64(round)) }
                            }
                        }
                        try await group.waitForAll()
                    }
                })
        }
        let oneSet = median(singles)
        let oneSmallSet = median(smallSingles)
        let ratio = median(samples) / oneSet
        let smallRatio = median(samples) / oneSmallSet
        return Row(
            id: "P3", measure: "1,000 concurrent sets, 1,020-key store",
            ours: format(nanoseconds: median(samples)),
            comparison:
                "one set on the same store \(format(nanoseconds: oneSet)), taken between the rounds; one set on a 20-key store \(format(nanoseconds: oneSmallSet)) (\(String(format: "%.2f", smallRatio))×)",
            ratio: ratio, target: "≤ 5× one set", met: ratio <= 5,
            detail: [
                "ours_ns": median(samples), "one_set_ns": oneSet,
                "one_set_20_keys_ns": oneSmallSet,
            ])
    }

    /// A 10,000-key file written by the store.
    func bigFile() async throws -> URL {
        let url = file("big.json")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        try await seed(url, mixedValues(10_000))
        return url
    }

    // P4
    func openBigStore() async throws -> Row {
        let url = try await bigFile()
        var ours: [Double] = []
        var foundation: [Double] = []
        for _ in 0..<(quick ? 5 : 21) {
            ours.append(
                try await timeAsync {
                    let store = try await PreferencesStore(
                        storage: FileStorage(fileURL: url), limits: Cases.noHistory)
                    precondition(store.snapshot.values.count == 10_000)
                })
            foundation.append(
                try time {
                    let data = try Data(contentsOf: url)
                    let object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
                    precondition((object["values"] as! [String: Any]).count == 10_000)
                })
        }
        let ratio = pairedRatio(ours, foundation)
        return Row(
            id: "P4", measure: "open a 10,000-key store", ours: format(nanoseconds: median(ours)),
            comparison:
                "JSONSerialization of the same bytes \(format(nanoseconds: median(foundation)))",
            ratio: ratio, target: "≤ 0.5× Foundation", met: ratio <= 0.5,
            detail: ["ours_ns": median(ours), "foundation_ns": median(foundation)])
    }

    // P5
    /// In process: from the start of a `set` on a store over `InMemoryStorage`
    /// (so no disk time is counted) to the subscriber's loop running with the
    /// value. Other process: from the moment the child calls `set` (its
    /// durable write included) to this process's subscriber running.
    func changeDelivery(benchPath: String) async throws -> Row {
        let count = quick ? 50 : 200
        let local = try await deliveries(
            store: try await PreferencesStore(storage: InMemoryStorage(), limits: Cases.noHistory),
            count: count,
            write: { store, value in
                let start = wallClock()
                try await store.set(.benchCounter, value)
                return start
            })
        let url = file("p5.json")
        try await seed(url, ["counter": 0])
        let child = try BenchChild(benchPath, ["--writer", url.path], input: .pipe, output: .pipe)
        guard let input = child.input, let output = child.output else {
            throw BenchFailure("no pipes to the --writer child")
        }
        let lines = LineReader(output)
        _ = lines.next()  // ready
        let external = try await deliveries(
            store: try await PreferencesStore(fileURL: url, limits: Cases.noHistory), count: count,
            write: { _, value in
                input.write(Data("\(value)\n".utf8))
                return Int64(lines.next() ?? "") ?? 0
            })
        try input.close()
        _ = child.wait()
        let localP50 = median(local)
        let externalP50 = median(external)
        return Row(
            id: "P5", measure: "change delivery (p50)",
            ours:
                "in process \(format(nanoseconds: localP50)); other process \(format(nanoseconds: externalP50))",
            comparison:
                "max in process \(format(nanoseconds: local.max() ?? .nan)); max other process \(format(nanoseconds: external.max() ?? .nan)) (its durable write included); UserDefaults on Linux: none",
            ratio: nil, target: "in process ≤ 1 ms (C2); other process ≤ 5 ms",
            met: localP50 <= 1_000_000 && externalP50 <= 5_000_000,
            detail: [
                "local_p50_ns": localP50, "external_p50_ns": externalP50,
                "local_max_ns": local.max() ?? .nan, "external_max_ns": external.max() ?? .nan,
            ])
    }

    /// Writes 1…count with `write` (which returns the wall-clock start of the
    /// write) and returns, for each, the time until the feed's consumer ran.
    func deliveries(
        store: PreferencesStore, count: Int,
        write: (PreferencesStore, Int) async throws -> Int64
    ) async throws -> [Double] {
        let received = Locked<[Int: Int64]>([:])
        let (arrivals, arrival) = AsyncStream<Int>.makeStream()
        let feed = store.changes(.benchCounter)
        let consumer = Task {
            for await value in feed {
                let stamp = wallClock()
                received.withLock { $0[value] = stamp }
                arrival.yield(value)
            }
        }
        defer { consumer.cancel() }
        var iterator = arrivals.makeAsyncIterator()
        let first = await iterator.next() ?? 0
        var samples: [Double] = []
        for value in (first + 1)...(first + count) {
            let start = try await write(store, value)
            while let got = await iterator.next(), got != value {}
            samples.append(Double(received.withLock { $0[value]! } - start))
        }
        return samples
    }

    // P6
    /// Heap bytes in use before and after opening a copy of the 10,000-key
    /// file, for several copies opened one after the other and all kept open
    /// (so no store is being freed while another is measured, and none
    /// shares the state of another, S9); the median of the increments.
    func memory() async throws -> Row {
        let url = try await bigFile()
        let size = Double(
            (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
        guard heapBytesInUse() != nil else {
            return Row(
                id: "P6", measure: "memory of a 10,000-key store", ours: "n/a", comparison: "",
                ratio: nil, target: "≤ 1.5× file size", met: nil)
        }
        var stores: [PreferencesStore] = []
        var increments: [Double] = []
        var residentGrowth: [Double] = []
        for round in 0..<(quick ? 3 : 5) {
            let copy = file("big-copy-\(round).json")
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: url, to: copy)
            let residentBefore = residentBytes() ?? 0
            let before = heapBytesInUse() ?? 0
            let store = try await PreferencesStore(
                storage: FileStorage(fileURL: copy), limits: Cases.noHistory)
            let after = heapBytesInUse() ?? before
            residentGrowth.append(Double(max(0, (residentBytes() ?? 0) - residentBefore)))
            increments.append(Double(max(0, after - before)))
            stores.append(store)
        }
        withExtendedLifetime(stores) {}
        let used = median(increments)
        let ratio = used / size
        return Row(
            id: "P6", measure: "memory of a 10,000-key store",
            ours: String(format: "%.0f KiB", used / 1024),
            comparison: String(format: "file %.0f KiB", size / 1024), ratio: ratio,
            target: "≤ 1.5× file size", met: ratio <= 1.5,
            detail: [
                "heap_bytes": used, "resident_growth_bytes": median(residentGrowth),
                "file_bytes": size,
            ])
    }
}
