import Foundation
import Preferences

/// P12: `prefs` as a process, as a shell runs it.
///
/// - `prefs get KEY` on the 20-key store (history on, as users get it)
///   beside `git config -f FILE --get KEY` on the same twenty values, each
///   spawned as a shell spawns it (``spawnAndWait(_:_:)``): the median of
///   the ratios of the two, run one after the other, 100 times.
/// - `prefs --version` beside a Swift program that only prints, built the
///   way `prefs` is (``buildPrintOnlyProgram(in:static:)``).
/// - What `prefs` maps while it runs on that store (`watch`: the same
///   binary as `get`, which exits too soon to be read), and what a service
///   on files maps (`prefs-harness maps`), with each binary's size
///   stripped (``ProcessFootprint``).
extension Cases {
    func processStart(prefs: URL?, harness: URL?) async throws -> [Row] {
        guard let prefs else {
            return [
                Row(
                    id: "P12", measure: "prefs as a process",
                    ours: "not run: no prefs (scripts/install.sh --build-only, or --prefs PATH)",
                    comparison: "—", ratio: nil, target: "≤ 2.5× git config --get", met: nil)
            ]
        }
        let url = file("p12.json")
        try await seed(url, twentyValues(), limits: PreferencesLimits())
        let scratch = file("p12")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let footprint = try ProcessFootprint.whileRunning(
            prefs, ["--file", url.path, "watch", "flag"], scratch: scratch)
        let built = footprint.dynamicSwiftRuntime ? "Swift runtime shared" : "Swift runtime static"
        let printOnly = try buildPrintOnlyProgram(
            in: scratch.appendingPathComponent("print-only"),
            static: !footprint.dynamicSwiftRuntime)
        var rows = [try getAgainstGit(prefs: prefs, store: url, built: built)]
        rows.append(try versionAgainstPrintOnly(prefs: prefs, printOnly: printOnly, built: built))
        rows.append(
            try libraries(
                prefs: prefs, footprint: footprint, printOnly: printOnly, store: url,
                scratch: scratch))
        if let harness {
            let service = try ProcessFootprint.ofService(
                harness, store: file("p12-service.json"), scratch: scratch)
            rows.append(
                Row(
                    id: "P12",
                    measure:
                        "a service on files (prefs-harness, swift build -c release): libraries",
                    ours: service.summary, comparison: "—", ratio: nil,
                    target: "no ICU, no libcurl", met: service.icu == nil && !service.curl,
                    detail: [
                        "libraries": Double(service.libraries.count),
                        "stripped_bytes": Double(service.strippedBytes ?? 0),
                    ]))
        }
        return rows
    }

    /// The runs `prefs-bench` times of each program: 100 (a process start
    /// varies by a tenth from one run to the next), 10 with `--quick`.
    private var processRounds: Int { quick ? 10 : 100 }

    private func getAgainstGit(prefs: URL, store: URL, built: String) throws -> Row {
        let measure = "prefs get KEY, 20-key file store, as a whole process (\(built))"
        guard let git = executable("git") else {
            return Row(
                id: "P12", measure: measure, ours: "not run: git is not installed",
                comparison: "—", ratio: nil, target: "≤ 2.5× git config --get", met: nil)
        }
        // The same twenty values in git's format (its names take no "_").
        var config = "[bench]\n"
        for (key, value) in twentyValues().sorted(by: { $0.key < $1.key }) {
            let text: String
            switch value {
            case .string(let string): text = string
            case .bool(let bool): text = "\(bool)"
            default: text = "\(value)"
            }
            config += "\t\(key.replacingOccurrences(of: "_", with: "")) = \(text)\n"
        }
        let gitFile = file("p12.gitconfig")
        try Data(config.utf8).write(to: gitFile)
        let ours = ["--file", store.path, "get", "key_7"]
        let theirs = ["config", "-f", gitFile.path, "--get", "bench.key7"]
        var prefsTimes: [Double] = []
        var gitTimes: [Double] = []
        // One untimed run of each first: both binaries in the page cache.
        for round in -1..<processRounds {
            let get = try spawnAndWait(prefs.path, ours)
            let config = try spawnAndWait(git, theirs)
            guard get.status == 0, get.lines == 1, config.status == 0, config.lines == 1 else {
                throw BenchFailure("prefs get or git config --get failed")
            }
            if round >= 0 {
                prefsTimes.append(get.nanoseconds)
                gitTimes.append(config.nanoseconds)
            }
        }
        let ratio = pairedRatio(prefsTimes, gitTimes)
        return Row(
            id: "P12", measure: measure, ours: format(nanoseconds: median(prefsTimes)),
            comparison: "git config -f FILE --get KEY \(format(nanoseconds: median(gitTimes)))",
            ratio: ratio, target: "≤ 2.5× git config --get", met: ratio <= 2.5,
            detail: ["ours_ns": median(prefsTimes), "git_ns": median(gitTimes)])
    }

    private func versionAgainstPrintOnly(prefs: URL, printOnly: URL?, built: String) throws -> Row {
        let measure = "prefs --version, as a whole process (\(built))"
        let target = "≤ 1.5× a program that only prints"
        var versionTimes: [Double] = []
        var printTimes: [Double] = []
        for round in -1..<processRounds {
            let version = try spawnAndWait(prefs.path, ["--version"])
            guard version.status == 0 else { throw BenchFailure("prefs --version failed") }
            if round >= 0 { versionTimes.append(version.nanoseconds) }
            if let printOnly {
                let printed = try spawnAndWait(printOnly.path, [])
                guard printed.status == 0 else { throw BenchFailure("print-only program failed") }
                if round >= 0 { printTimes.append(printed.nanoseconds) }
            }
        }
        guard printOnly != nil else {
            return Row(
                id: "P12", measure: measure, ours: format(nanoseconds: median(versionTimes)),
                comparison: "no print-only program: swiftc is not on PATH, or failed",
                ratio: nil, target: target, met: nil,
                detail: ["ours_ns": median(versionTimes)])
        }
        let ratio = pairedRatio(versionTimes, printTimes)
        return Row(
            id: "P12", measure: measure, ours: format(nanoseconds: median(versionTimes)),
            comparison:
                "a Swift program that only prints, built the same way, \(format(nanoseconds: median(printTimes)))",
            ratio: ratio, target: target, met: ratio <= 1.5,
            detail: ["ours_ns": median(versionTimes), "print_only_ns": median(printTimes)])
    }

    /// What `prefs` maps on a file store and its size, beside `prefs-tls`
    /// (found beside it) and the print-only program.
    private func libraries(
        prefs: URL, footprint: ProcessFootprint, printOnly: URL?, store: URL, scratch: URL
    ) throws -> Row {
        var others: [String] = []
        var detail = [
            "libraries": Double(footprint.libraries.count),
            "stripped_bytes": Double(footprint.strippedBytes ?? 0),
        ]
        let tls = prefs.deletingLastPathComponent().appendingPathComponent("prefs-tls")
        if FileManager.default.isExecutableFile(atPath: tls.path) {
            let tlsFootprint = try ProcessFootprint.whileRunning(
                tls, ["--file", store.path, "watch", "flag"], scratch: scratch)
            others.append("prefs-tls: \(tlsFootprint.summary)")
            detail["tls_libraries"] = Double(tlsFootprint.libraries.count)
        }
        if let printOnly, let size = ProcessFootprint.strippedSize(of: printOnly, scratch: scratch)
        {
            others.append(
                "print-only program: \(format(bytes: Double(size))) stripped")
            detail["print_only_stripped_bytes"] = Double(size)
        }
        return Row(
            id: "P12", measure: "prefs on a file store: shared libraries mapped, binary size",
            ours: footprint.summary,
            comparison: others.isEmpty ? "—" : others.joined(separator: "; "),
            ratio: nil, target: "≤ 16 libraries, no ICU, no libcurl",
            met: footprint.libraries.count <= 16 && footprint.icu == nil && !footprint.curl,
            detail: detail)
    }
}
