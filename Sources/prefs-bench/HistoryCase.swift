import Foundation
import Preferences

/// P10: what history costs (H1–H4 in
/// Sources/Preferences/Preferences.docc/HistoryAndUndo.md), on a 20-key
/// store with 1,000 entries kept.
extension Cases {
    /// The 20-key store with 1,000 changes in its history, and beside it the
    /// same values in a store without history, whose document the floor
    /// writes.
    func historyStore() async throws -> (store: PreferencesStore, plain: PreferencesStore, url: URL)
    {
        let url = file("p10.json")
        let plainURL = file("p10-plain.json")
        try await seed(url, twentyValues(), limits: PreferencesLimits())
        try await seed(plainURL, twentyValues())
        let store = try await PreferencesStore(fileURL: url)
        let plain = try await PreferencesStore(fileURL: plainURL, limits: Self.noHistory)
        for index in 0..<1000 { try await store.set(.benchCounter, -1 - index) }
        return (store, plain, url)
    }

    // P10
    func history(prefs: URL?) async throws -> [Row] {
        let (store, plain, url) = try await historyStore()
        let floorURL = file("p10-floor.json")
        var ours: [Double] = []
        var floor: [Double] = []
        for index in 0..<iterations {
            ours.append(try await timeAsync { try await store.set(.benchCounter, index) })
            try await plain.set(.benchCounter, index)
            let bytes = Array(try Data(contentsOf: plain.storage.location.fileURL))
            floor.append(time { FloorWriter.replace(bytes, at: floorURL.path) })
        }
        let setRatio = pairedRatio(ours, floor)
        let kept = try await store.history().entries.count
        var rows = [
            Row(
                id: "P10", measure: "one durable set, 20-key store, \(kept) history entries kept",
                ours: format(nanoseconds: median(ours)),
                comparison:
                    "floor of the 20-key document without history \(format(nanoseconds: median(floor)))",
                ratio: setRatio, target: "≤ 1.3× the floor", met: setRatio <= 1.3,
                detail: ["ours_ns": median(ours), "floor_ns": median(floor)])
        ]
        rows.append(try await historyColdStart(from: url))
        if let prefs { rows.append(try historyLog(prefs: prefs, url: url)) }
        return rows
    }

    /// P8 with history: opening copies of the store as it is after 1,000
    /// changes (its document carries the newest entries; the archive beside
    /// it is not read at open).
    func historyColdStart(from url: URL) async throws -> Row {
        let folder = file("p10-cold")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (ours, foundation) = try await coldStarts(
            of: try Data(contentsOf: url), plain: try Data(contentsOf: file("p10-plain.json")),
            in: folder, limits: PreferencesLimits())
        let ratio = pairedRatio(ours, foundation)
        return Row(
            id: "P10", measure: "cold start with history: open the 20-key store and read a key",
            ours: format(nanoseconds: median(ours)),
            comparison:
                "Data(contentsOf:) + JSONDecoder of the 20 fields \(format(nanoseconds: median(foundation)))",
            ratio: ratio, target: "≤ 1.7× Foundation", met: ratio <= 1.7,
            detail: ["ours_ns": median(ours), "foundation_ns": median(foundation)])
    }

    /// `prefs log` of the store's 1,000 entries, as a whole process.
    func historyLog(prefs: URL, url: URL) throws -> Row {
        var elapsed: [Double] = []
        var start: [Double] = []
        for _ in 0..<(quick ? 5 : 20) {
            let log = try spawnAndWait(prefs.path, ["--file", url.path, "log"])
            precondition(log.status == 0, "prefs log failed")
            precondition(log.lines >= 1000, "prefs log printed too little")
            elapsed.append(log.nanoseconds)
            // The process alone: starting `prefs` and the libraries it loads.
            let version = try spawnAndWait(prefs.path, ["--version"])
            precondition(version.status == 0, "prefs --version failed")
            start.append(version.nanoseconds)
        }
        let milliseconds = median(elapsed) / 1e6
        return Row(
            id: "P10", measure: "prefs log of 1,000 entries, as a whole process",
            ours: format(nanoseconds: median(elapsed)),
            comparison:
                "prefs --version, the process start alone, \(format(nanoseconds: median(start)))",
            ratio: nil, target: "≤ 30 ms", met: milliseconds <= 30,
            detail: ["ours_ns": median(elapsed), "start_ns": median(start)])
    }
}

extension String {
    fileprivate var fileURL: URL { URL(fileURLWithPath: self) }
}
