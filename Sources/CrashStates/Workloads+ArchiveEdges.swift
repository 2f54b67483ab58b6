import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Workloads of the archive's rarer moments: an append that first cuts off
/// the torn last line an earlier append left, and a trim under the default
/// history limit of 1,000 entries.
extension Workload {
    static let archiveEdgeWorkloads: [Workload] = [archiveTornTail, archiveTrimDefault]

    /// The start of an entry whose append did not finish: no newline.
    static let tornLine = Array("{\"changes\":{\"counter\":{\"new\":-7".utf8)

    /// The set that appends to the archive (``archiveSets``' first),
    /// recorded on an archive whose last line is torn.
    static let archiveTornTail = Workload(
        name: "archive-torn-tail", summary: "an archive with a torn last line appended to",
        limits: archiveLimits,
        before: ["counter": .int(Int64(archiveSets.lowerBound - 1))],
        steps: [
            Step(changes: ["counter": .int(Int64(archiveSets.lowerBound))], acknowledgedBy: 1)
        ],
        setup: { directory in
            let store = try await openPlain(directory, limits: archiveLimits)
            for value in 1..<archiveSets.lowerBound { try await store.set(key("counter"), value) }
            let archive = URL(fileURLWithPath: directory + "/prefs.json.history")
            let bytes = try FileManager.default.contents(atPath: archive.path)
                .unwrapped(or: "no archive before the set that appends to it")
            try Data(Array(bytes) + tornLine).write(to: archive)
        },
        run: { directory in
            try await openPlain(directory, limits: archiveLimits).set(
                key("counter"), archiveSets.lowerBound)
            acknowledge()
            let bytes = FileManager.default.contents(atPath: directory + "/prefs.json.history")
                .map { Array($0) }
            guard bytes?.last == 0x0A, bytes?.firstRange(of: tornLine) == nil else {
                throw ExplorerError("the set did not cut the archive's torn line off")
            }
        })

    /// Keys a setup sets together, so that a group commit writes several
    /// changes at once: the archive fills in a few hundred writes.
    static let fillKeys = (0..<10).map { "fill_\($0)" }

    /// One set on a store with the default history limit, whose archive
    /// holds as many entries as it may before a trim: the set trims it to
    /// the newest 1,000.
    static let archiveTrimDefault = Workload(
        name: "archive-trim-1000", summary: "the archive trimmed under the default limit of 1,000",
        before: ["a": .int(1)],
        steps: [Step(changes: ["a": .int(2)], acknowledgedBy: 1)],
        otherKeys: Set(fillKeys),
        setup: { directory in
            try await fillToTheTrim(directory)
        },
        run: { directory in
            let before = archiveLines(directory)
            try await openPlain(directory).set(key("a"), 2)
            acknowledge()
            guard archiveLines(directory) < before else {
                throw ExplorerError("the set did not trim the archive (\(before) lines)")
            }
        })

    /// The lines of `prefs.json.history` in `directory`.
    static func archiveLines(_ directory: String) -> Int {
        let bytes = FileManager.default.contents(atPath: directory + "/prefs.json.history")
        return bytes?.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } ?? 0
    }

    /// Fills a store (in memory, `/dev/shm`, where there is one: its
    /// fsyncs cost nothing; else beside `directory`) until its next set
    /// trims the archive, and copies it into `directory` as it was just
    /// before that set. Nothing of it is recorded.
    static func fillToTheTrim(_ directory: String) async throws {
        let name = URL(fileURLWithPath: directory).lastPathComponent
        let pid = ProcessInfo.processInfo.processIdentifier
        let memory = try? FileManager.default.attributesOfItem(atPath: "/dev/shm")
        let filling =
            memory?[.type] as? FileAttributeType == .typeDirectory
            ? "/dev/shm/prefs-crash-\(pid)-\(name)" : directory + "-fill"
        defer { try? FileManager.default.removeItem(atPath: filling) }
        let store = try await openPlain(filling)
        try await store.set(key("a"), 1)
        var round = 0
        while archiveLines(filling) < 1_100 {
            round += 1
            let value = round
            try await withThrowingTaskGroup(of: Void.self) { group in
                for name in fillKeys { group.addTask { try await store.set(key(name), value) } }
                try await group.waitForAll()
            }
        }
        // Then one set at a time, each on a copy kept of the store before it.
        for attempt in 0..<400 {
            let saved = try FileTree.read(filling)
            let lines = archiveLines(filling)
            try await store.set(key(fillKeys[attempt % fillKeys.count]), -attempt)
            if archiveLines(filling) < lines {
                try FileManager.default.removeItem(atPath: directory)
                try saved.write(to: directory)
                return
            }
        }
        throw ExplorerError("the archive was never trimmed in 400 sets")
    }
}

extension Optional {
    /// The value, or an ``ExplorerError`` saying `message`.
    func unwrapped(or message: String) throws -> Wrapped {
        guard let self else { throw ExplorerError(message) }
        return self
    }
}
