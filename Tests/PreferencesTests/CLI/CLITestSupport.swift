import Foundation
import Testing

@testable import Preferences

/// A store file in a fresh directory, driven through the built `prefs` binary.
final class CLIWorkspace {
    let directory: TemporaryDirectory
    let store: URL

    init() throws {
        directory = try TemporaryDirectory()
        store = directory.file("prefs.json")
    }

    /// Runs `prefs --file <store> arguments…`.
    @discardableResult
    func prefs(_ arguments: String...) throws -> ProcessOutput {
        try prefs(arguments)
    }

    @discardableResult
    func prefs(_ arguments: [String]) throws -> ProcessOutput {
        try run("prefs", ["--file", store.path] + arguments)
    }

    /// Runs `prefs` with no `--file`, with `PREFS_HOME` (or other variables) set.
    func prefs(environment: [String: String], _ arguments: [String]) throws -> ProcessOutput {
        var merged = ProcessInfo.processInfo.environment
        merged["PREFS_HOME"] = nil
        merged["XDG_CONFIG_HOME"] = nil
        merged.merge(environment) { _, new in new }
        return try run("prefs", arguments, environment: merged)
    }

    /// The stored values, read through the library.
    func storedValues() async throws -> [String: PreferenceValue] {
        try await PreferencesStore(fileURL: store).snapshot.values
    }

    func file(_ name: String) -> URL { directory.file(name) }
}

extension ProcessOutput {
    /// Standard output without its final newline.
    var line: String {
        standardOutput.hasSuffix("\n") ? String(standardOutput.dropLast()) : standardOutput
    }
}

/// Runs `body(index)` on `count` threads of their own (blocking child
/// processes must not occupy the few threads of Swift's concurrency pool)
/// and returns when all have finished.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}
