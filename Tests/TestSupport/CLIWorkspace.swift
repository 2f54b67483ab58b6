import Foundation
import Preferences
import PreferencesTesting
import Testing

/// A store file in a fresh directory, driven through the built `prefs` binary.
package final class CLIWorkspace: Sendable {
    package let directory: TemporaryDirectory
    package let store: URL

    package init() throws {
        directory = try TemporaryDirectory()
        store = directory.file("prefs.json")
    }

    /// Runs `prefs --file <store> arguments…` and awaits its end, off the
    /// cooperative pool. A child still running after `timeout` is killed and
    /// the call throws ``DeadlineExceeded`` with the command line and what
    /// the child printed.
    @discardableResult
    package func prefs(_ arguments: String..., timeout: Duration = .seconds(120)) async throws
        -> ProcessOutput
    {
        try await prefs(arguments, timeout: timeout)
    }

    @discardableResult
    package func prefs(_ arguments: [String], timeout: Duration = .seconds(120)) async throws
        -> ProcessOutput
    {
        try await runChild("prefs", ["--file", store.path] + arguments, timeout: timeout)
    }

    /// Runs `prefs` with no `--file`, with `PREFS_HOME` (or other variables) set.
    package func prefs(environment: [String: String], _ arguments: [String]) async throws
        -> ProcessOutput
    {
        var merged = cleanEnvironment()
        merged["PREFS_HOME"] = nil
        merged["XDG_CONFIG_HOME"] = nil
        merged.merge(environment) { _, new in new }
        return try await runChild("prefs", arguments, environment: merged)
    }

    /// The stored values, as the store's file says (read by ``TestJSON``,
    /// not the library); none when there is no file.
    package func storedValues() async throws -> [String: PreferenceValue] {
        guard let bytes = FileManager.default.contents(atPath: store.path) else { return [:] }
        guard case .object(let root) = try TestJSON.parse(Array(bytes)),
            case .object(let values)? = root["values"]
        else { throw TestJSON.Failure(reason: "\(store.path) holds no values object") }
        return values
    }

    package func file(_ name: String) -> URL { directory.file(name) }
}

extension ProcessOutput {
    /// Standard output without its final newline.
    package var line: String {
        standardOutput.hasSuffix("\n") ? String(standardOutput.dropLast()) : standardOutput
    }
}
