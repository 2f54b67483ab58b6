import Foundation
import Preferences
import PreferencesTestSupport
import PreferencesTesting
import Testing

/// The shells the completion tests drive, and a clean environment to run
/// them and `prefs` in.
enum CompletionShells {
    /// Where shells are looked for; Homebrew's first, as macOS's own bash
    /// is too old.
    static let searchPath = ["/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin"]

    /// The path of the program `name`, if one is installed.
    static func find(_ name: String) -> String? {
        searchPath.map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static let zsh = find("zsh")
    static let fish = find("fish")

    /// bash 4 or later: macOS's bash 3.2 reads nothing from `source <(…)`.
    static func bash() async throws -> String? {
        guard let path = find("bash") else { return nil }
        let output = try await runProgram(
            path, ["-c", "echo ${BASH_VERSINFO[0]}"], environment: [:])
        guard let major = Int(output.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        return major >= 4 ? path : nil
    }

    /// The environment of every child: the built `prefs` first on `PATH`,
    /// `HOME` and `PREFS_HOME` in `workspace`, and nothing inherited from
    /// the developer's shell (no `PREFS_MANIFEST`, `PREFS_ETCD_ENDPOINTS`,
    /// `XDG_CONFIG_HOME`).
    static func environment(_ workspace: TemporaryDirectory, _ extra: [String: String] = [:])
        -> [String: String]
    {
        let products = productURL("prefs").deletingLastPathComponent().path
        var environment = [
            "PATH": ([products] + searchPath).joined(separator: ":"),
            "HOME": workspace.file("home").path,
            "PREFS_HOME": workspace.file("stores").path,
        ]
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// `text` in single quotes for bash and zsh.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

/// A fresh directory with a store directory (`stores`, the `PREFS_HOME`
/// of every child) and a home directory, where stores are made with the
/// built `prefs`.
final class CompletionWorkspace: Sendable {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        for name in ["stores", "home"] {
            try FileManager.default.createDirectory(
                at: directory.file(name), withIntermediateDirectories: true)
        }
    }

    var environment: [String: String] { CompletionShells.environment(directory) }

    /// The file of suite `name`.
    func store(_ name: String) -> URL { directory.file("stores/\(name).json") }

    /// Runs the built `prefs` in the clean environment.
    @discardableResult
    func prefs(_ arguments: String..., extra: [String: String] = [:]) async throws
        -> ProcessOutput
    {
        try await runChild(
            "prefs", arguments, environment: CompletionShells.environment(directory, extra))
    }

    /// Two suites, `app` (whose service published its manifest, declaring
    /// `dark_mode`, `language` and `map_zoom`; `build` is stored) and `other`
    /// (`zoom`), beside files that are not stores: the manifest, a corrupt
    /// file set aside, a directory, and a name that is not a suite's.
    func makeStores() async throws {
        try await prefs("--suite", "app", "set", "build", "abc")
        try await prefs("--suite", "other", "set", "zoom", "2")
        _ = try await PreferencesStore(
            fileURL: store("app"), declaring: [PreferenceKeys.darkMode, .language, .mapZoom])
        #expect(FileManager.default.fileExists(atPath: directory.file("stores/app.keys.json").path))
        try write("{", to: directory.file("stores/old.json.corrupt-20260101T000000Z"))
        try write("{}", to: directory.file("stores/not a suite.json"))
        try FileManager.default.createDirectory(
            at: directory.file("stores/folder.json"), withIntermediateDirectories: true)
    }

    /// The completion script for `shell`, saved in the workspace.
    func script(_ shell: String) async throws -> URL {
        let output = try await prefs("completions", shell)
        #expect(output.status == 0, "\(output.standardError)")
        let file = directory.file("prefs.\(shell)")
        try write(output.standardOutput, to: file)
        return file
    }

    /// The candidates fish offers for `line` (descriptions dropped), sorted.
    func fishCompletions(_ line: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> [String]
    {
        let fish = try #require(CompletionShells.fish)
        let file = try await script("fish")
        let output = try await runProgram(
            fish,
            [
                "--no-config", "-c",
                "source \(CompletionShells.quoted(file.path)); and complete -C \(CompletionShells.quoted(line))",
            ], environment: environment)
        #expect(output.status == 0, "\(output.standardError)", sourceLocation: sourceLocation)
        #expect(output.standardError == "", sourceLocation: sourceLocation)
        return output.standardOutput.split(separator: "\n")
            .map { String($0.split(separator: "\t", maxSplits: 1)[0]) }
            .sorted()
    }
}
