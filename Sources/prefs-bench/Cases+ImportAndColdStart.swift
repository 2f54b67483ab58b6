import Foundation
import Preferences

/// P7 (importing a legacy file) and P8 (a cold start), with their profiles.
extension Cases {
    // P7
    /// The 10,000-line file P7 imports.
    func writePropertiesSource() throws -> URL {
        let source = file("legacy.properties")
        var text = "# settings exported from the old service\n"
        for index in 0..<10_000 {
            text += "service.option.\(index) = value \(index) with some text\\u00e9\n"
        }
        try Data(text.utf8).write(to: source)
        return source
    }

    /// One import of `source` into a fresh store at `target`, as the README
    /// shows it (`merge`, the bulk call); the time of reading and parsing
    /// goes to `parse`. Returns the store, so the caller drops it (and the
    /// 10,000 values it holds) after its timing: an import is done when its
    /// durable write returns, and a program keeps the store it imported into.
    func importOnce(_ source: URL, into target: URL, parse: inout Double) async throws
        -> PreferencesStore
    {
        var read: LegacyContents?
        parse = try time { read = try LegacyReader.read(.properties, at: source) }
        let contents = read!
        let store = try await PreferencesStore(fileURL: target, limits: Cases.noHistory)
        try await store.edit { try $0.merge(contents.values) }
        precondition(store.snapshot.values.count == 10_000)
        return store
    }

    /// Beside each import, the floor of its write: the same bytes written
    /// durably to a new file of the same directory with nothing around it
    /// (``FloorWriter``), so the row shows how much of the time is the disk's.
    func importProperties() async throws -> Row {
        let source = try writePropertiesSource()
        var samples: [Double] = []
        var parses: [Double] = []
        var floors: [Double] = []
        var written: [UInt8] = []
        for round in 0..<(quick ? 5 : 15) {
            let target = file("imported-\(round).json")
            var parse = 0.0
            var imported: PreferencesStore?
            samples.append(
                try await timeAsync {
                    imported = try await importOnce(source, into: target, parse: &parse)
                })
            parses.append(parse)
            withExtendedLifetime(imported) {}
            if written.isEmpty { written = Array(try Data(contentsOf: target)) }
            let floorPath = file("imported-floor-\(round).json").path
            floors.append(time { FloorWriter.replace(written, at: floorPath) })
        }
        let total = median(samples)
        return Row(
            id: "P7", measure: "import a 10,000-line properties file (parse, one durable write)",
            ours: format(nanoseconds: total),
            comparison:
                "of which reading and parsing \(format(nanoseconds: median(parses))); floor: the same \(String(format: "%.1f", Double(written.count) / 1_048_576)) MiB written durably to a new file alone \(format(nanoseconds: median(floors)))",
            ratio: nil, target: "≤ 20 ms", met: total <= 20_000_000,
            detail: [
                "ours_ns": total, "parse_ns": median(parses), "floor_ns": median(floors),
                "file_bytes": Double(written.count),
            ])
    }

    // P8
    /// A new file each round, so nothing is cached; beside it, Foundation's
    /// `Data(contentsOf:)` + `JSONDecoder` of the same file into a struct of
    /// the same 20 fields. The files are all written before the first round,
    /// so no round opens a file whose writer is still winding down (its
    /// state would be shared, not loaded).
    func coldStart() async throws -> Row {
        // A directory of their own, so that nothing else watching the bench
        // directory sees these writes.
        let folder = file("cold")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = folder.appendingPathComponent("model.json")
        try await seed(model, twentyValues())
        let bytes = try Data(contentsOf: model)
        let (ours, foundation) = try await coldStarts(
            of: bytes, plain: bytes, in: folder, limits: Self.noHistory)
        let ratio = pairedRatio(ours, foundation)
        return Row(
            id: "P8", measure: "cold start: open a 20-key store and read a key",
            ours: format(nanoseconds: median(ours)),
            comparison:
                "Data(contentsOf:) + JSONDecoder of the same 20 fields \(format(nanoseconds: median(foundation)))",
            ratio: ratio, target: "≤ 1.5× Foundation", met: ratio <= 1.5,
            detail: ["ours_ns": median(ours), "foundation_ns": median(foundation)])
    }

    /// Times opening fresh copies of a store file holding `bytes` and
    /// reading a key, beside decoding copies holding `plain` (the same 20
    /// values without history) with `JSONDecoder`: one of each, in turn.
    func coldStarts(of bytes: Data, plain: Data, in folder: URL, limits: PreferencesLimits)
        async throws -> (ours: [Double], foundation: [Double])
    {
        var ours: [Double] = []
        var foundation: [Double] = []
        // Every copy is written before the first round: a file written just
        // before it is opened is still settling (its stamp is too recent to
        // trust, and the writes compete with the reads), which is not a cold
        // start.
        let copies = (0..<(quick ? 20 : 100)).map { index in
            (
                folder.appendingPathComponent("cold-\(index).json"),
                folder.appendingPathComponent("plain-\(index).json")
            )
        }
        for (copy, plainCopy) in copies {
            try bytes.write(to: copy)
            try plain.write(to: plainCopy)
        }
        for (copy, plainCopy) in copies {
            ours.append(
                try await timeAsync {
                    let store = try await PreferencesStore(fileURL: copy, limits: limits)
                    precondition(store[.benchFlag])
                })
            foundation.append(
                try time {
                    let data = try Data(contentsOf: plainCopy)
                    let decoded = try JSONDecoder().decode(TwentyFieldFile.self, from: data)
                    precondition(decoded.values.flag)
                })
        }
        return (ours, foundation)
    }

    /// Imports the P7 file `count` times, each into a fresh store, for a
    /// profiler (`--profile-import N`).
    func profileImport(count: Int) async throws {
        let source = try writePropertiesSource()
        var parse = 0.0
        var imported: [PreferencesStore] = []
        let elapsed = try await timeAsync {
            for round in 0..<count {
                imported.append(
                    try await importOnce(
                        source, into: file("profile-import-\(round).json"), parse: &parse))
            }
        }
        withExtendedLifetime(imported) {}
        FileHandle.standardError.write(
            Data("\(format(nanoseconds: elapsed / Double(count))) per import\n".utf8))
    }

    /// Opens `count` fresh 20-key stores and reads a key from each, for a
    /// profiler (`--profile-cold N`); the files are written first.
    func profileColdStart(count: Int) async throws {
        var urls: [URL] = []
        for index in 0..<count {
            let url = file("profile-\(index).json")
            try await seed(url, twentyValues())
            urls.append(url)
        }
        FileHandle.standardError.write(Data("opening \(count) stores\n".utf8))
        let elapsed = try await timeAsync {
            for url in urls {
                let store = try await PreferencesStore(fileURL: url, limits: Cases.noHistory)
                precondition(store[.benchFlag])
            }
        }
        FileHandle.standardError.write(
            Data("\(format(nanoseconds: elapsed / Double(count))) per open\n".utf8))
    }
}

/// The store file of `twentyValues()` as a `Decodable` struct: what a
/// hand-rolled JSON settings file decodes into.
struct TwentyFieldFile: Decodable {
    struct Fields: Decodable {
        let key_0, key_1, key_2, key_3, key_4, key_5, key_6, key_7, key_8, key_9: String
        let key_10, key_11, key_12, key_13, key_14, key_15, key_16, key_17, key_18: String
        let flag: Bool
    }
    let format: Int
    let values: Fields
}

/// Reads lines from a pipe.
final class LineReader {
    let handle: FileHandle
    var buffer = Data()
    init(_ handle: FileHandle) { self.handle = handle }
    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}
