import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Checker {
    /// The archive's entries agree with the document's where both hold the
    /// same sequence, when the archive is of the document's history (names
    /// it, or names none). Read from the bytes on disk, before and after
    /// the store is opened.
    static func archiveAgrees(_ workload: Workload, directory: String) -> [Violation] {
        let path = directory + "/" + workload.file
        guard let bytes = FileManager.default.contents(atPath: path),
            let document = try? JSONText.parse(Array(bytes), source: path),
            case .array(let history)? = document["history"]
        else { return [] }
        var documentEntries: [Int64: PreferenceValue] = [:]
        for entry in history {
            if let number = entry["sequence"]?.integerValue { documentEntries[number] = entry }
        }
        let storage = FileStorage(fileURL: URL(fileURLWithPath: path))
        guard let archive = try? storage.historyArchive?.read() else { return [] }
        if let own = archive.id, own != document["history_id"]?.stringValue { return [] }
        var violations: [Violation] = []
        for text in archive.entries {
            guard let entry = try? JSONText.parse(text, source: "history archive"),
                let number = entry["sequence"]?.integerValue,
                let kept = documentEntries[number]
            else { continue }
            if entry != kept {
                violations.append(
                    Violation(
                        invariant: Violation.archiveAgrees,
                        detail:
                            "#\(number) differs: the archive holds \(String(decoding: text, as: UTF8.self)), the document \(kept)"
                    ))
            }
        }
        return violations
    }
}
