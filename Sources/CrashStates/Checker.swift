import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What runs in the fresh process opened on a crash state: the store is
/// opened as a restarted service opens it, with the real library, and the
/// invariants are checked. Each violation is printed as one line,
/// `violation INVARIANT: DETAIL`.
enum Checker {
    static func check(_ workload: Workload, directory: String, acknowledged given: Int) async
        -> [Violation]
    {
        let acknowledged = workload.reopeningCompletes ? Int.max : given
        var violations =
            workload.checkBeforeOpening(directory, given)
            + archiveAgrees(workload, directory: directory)
        let url = URL(fileURLWithPath: directory + "/" + workload.file)
        let store: PreferencesStore
        do {
            store = try await workload.open(url, workload.limits)
        } catch {
            return violations + [Violation(invariant: Violation.opens, detail: "\(error)")]
        }
        violations += values(store.snapshot.values, workload, acknowledged: acknowledged)
        do {
            violations += try await history(store, workload, directory: directory)
            violations += try await workload.checkAfterOpening(directory, given, store)
            if workload.probes {
                violations += try await probe(store)
                violations += leftovers(workload, directory: directory)
            }
            violations += archiveAgrees(workload, directory: directory)
        } catch {
            violations.append(Violation(invariant: Violation.opens, detail: "\(error)"))
        }
        if workload.name != "corrupt-file" {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names where name.contains(".corrupt-") {
                violations.append(Violation(invariant: Violation.setAside, detail: "\(name) made"))
            }
        }
        return violations
    }

    /// Every key old or new, the acknowledged ones new, each step whole.
    static func values(
        _ values: [String: PreferenceValue], _ workload: Workload, acknowledged: Int
    ) -> [Violation] {
        var violations: [Violation] = []
        var keys = Set(workload.before.keys)
        for step in workload.steps { keys.formUnion(step.changes.keys) }
        for name in keys.sorted() {
            var required: PreferenceValue? = workload.before[name]
            var later: [PreferenceValue?] = []
            for step in workload.steps {
                guard let change = step.changes[name] else { continue }
                if step.acknowledgedBy <= acknowledged {
                    required = change
                    later = []
                } else {
                    later.append(change)
                }
            }
            let found = values[name]
            if found != required && !later.contains(where: { $0 == found }) {
                let invariant =
                    found == workload.before[name]
                    ? Violation.acknowledgedWrite : Violation.oldOrNew
                violations.append(
                    Violation(
                        invariant: invariant,
                        detail:
                            "\(name) is \(found.map { "\($0)" } ?? "absent"), expected \(required.map { "\($0)" } ?? "absent")"
                    ))
            }
        }
        for name in values.keys.sorted()
        where !keys.contains(name) && !workload.otherKeys.contains(name) {
            violations.append(
                Violation(invariant: Violation.oldOrNew, detail: "\(name) is stored, from nowhere"))
        }
        for (index, step) in workload.steps.enumerated() where step.acknowledgedBy > acknowledged {
            let done = step.changes.filter { values[$0.key] == $0.value }.count
            if done != 0 && done != step.changes.count {
                violations.append(
                    Violation(
                        invariant: Violation.oldOrNew,
                        detail:
                            "step \(index + 1) is there for \(done) of its \(step.changes.count) keys"
                    ))
            }
        }
        return violations
    }

    /// The history: numbered without gaps or repeats up to the document's
    /// sequence, as many entries as the limit keeps, each key's last entry
    /// agreeing with its value, and nothing in the archive past the document.
    static func history(_ store: PreferencesStore, _ workload: Workload, directory: String)
        async throws -> [Violation]
    {
        var violations: [Violation] = []
        let snapshot = store.snapshot
        let history = try await store.history()
        let numbers = history.entries.map(\.sequence)
        if let first = numbers.first, numbers != Array(first...(first + Int64(numbers.count) - 1)) {
            violations.append(
                Violation(invariant: Violation.history, detail: "entries numbered \(numbers)"))
        }
        if history.latest != snapshot.sequence
            || (numbers.last.map { $0 != snapshot.sequence } ?? false)
        {
            violations.append(
                Violation(
                    invariant: Violation.history,
                    detail:
                        "the document is at #\(snapshot.sequence), its history ends at #\(numbers.last ?? 0)"
                ))
        }
        let kept = min(Int64(workload.limits.history.entries), snapshot.sequence)
        if Int64(numbers.count) < kept {
            violations.append(
                Violation(
                    invariant: Violation.history,
                    detail: "\(numbers.count) entries kept of the last \(kept) changes"))
        }
        var lastChange: [String: PreferenceValue?] = [:]
        for entry in history.entries {
            for (name, change) in entry.changes { lastChange[name] = change.new }
        }
        for (name, new) in lastChange
        where snapshot.values[name] != new && !workload.secretKeys.contains(name) {
            violations.append(
                Violation(
                    invariant: Violation.history,
                    detail:
                        "\(name)'s last entry sets \(new.map { "\($0)" } ?? "nothing"), the document holds \(snapshot.values[name].map { "\($0)" } ?? "nothing")"
                ))
        }
        let storage = FileStorage(fileURL: URL(fileURLWithPath: directory + "/" + workload.file))
        for text in try storage.historyArchive?.read().entries ?? [] {
            let entry = try? JSONText.parse(text, source: "history archive")
            guard let number = entry?["sequence"]?.integerValue else { continue }
            if number > snapshot.sequence {
                violations.append(
                    Violation(
                        invariant: Violation.archive,
                        detail:
                            "the archive holds #\(number), the document is at #\(snapshot.sequence)"
                    ))
            }
        }
        return violations
    }

    /// The temporary files of the store's file and of its archive
    /// (`.NAME.….tmp`) still there once the store has written again: the
    /// write removes those a writer that died left.
    static func leftovers(_ workload: Workload, directory: String) -> [Violation] {
        let file = URL(fileURLWithPath: directory + "/" + workload.file)
        let prefix = "." + file.lastPathComponent + "."
        let names =
            (try? FileManager.default.contentsOfDirectory(
                atPath: file.deletingLastPathComponent().path)) ?? []
        return names.sorted().filter { $0.hasPrefix(prefix) && $0.hasSuffix(".tmp") }.map {
            Violation(invariant: Violation.temporaryLeft, detail: "\($0) is left after a write")
        }
    }

    /// One more write: it takes the next number, and the history stays whole.
    static func probe(_ store: PreferencesStore) async throws -> [Violation] {
        let before = store.snapshot.sequence
        try await store.set(PreferenceKey<Int>("crash_probe", default: 0), 1)
        let history = try await store.history()
        let numbers = history.entries.map(\.sequence)
        if store.snapshot.sequence != before + 1 || numbers.last != before + 1
            || Set(numbers).count != numbers.count
        {
            return [
                Violation(
                    invariant: Violation.sequence,
                    detail:
                        "after #\(before), a write took #\(store.snapshot.sequence); entries \(numbers.suffix(4))"
                )
            ]
        }
        return []
    }
}
