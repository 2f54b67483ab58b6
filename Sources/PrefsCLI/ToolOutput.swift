import Preferences

/// Where `prefs` writes: standard output for results, standard error for
/// errors and warnings.
///
/// Each call writes its text at once (no buffering), so `watch` lines reach
/// a pipe as they happen. Tests pass closures that collect the text:
///
/// ```swift
/// let output = ToolOutput(standardOutput: { collected.append($0) }, standardError: { _ in })
/// let status = await PrefsTool(output: output).run(["list"])
/// ```
public struct ToolOutput: Sendable {
    /// Receives result text.
    public var standardOutput: @Sendable (String) -> Void
    /// Receives error and warning lines.
    public var standardError: @Sendable (String) -> Void

    /// Creates an output from two receivers.
    public init(
        standardOutput: @escaping @Sendable (String) -> Void,
        standardError: @escaping @Sendable (String) -> Void
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// The process's standard output and standard error.
    public static let terminal = ToolOutput(
        standardOutput: { StandardStream.output.write($0) },
        standardError: { StandardStream.error.write($0) })

    func print(_ line: String) { standardOutput(line + "\n") }
    func error(_ message: String) { standardError("prefs: error: \(message)\n") }
    func warning(_ message: String) { standardError("prefs: warning: \(message)\n") }
    func note(_ message: String) { standardError("prefs: note: \(message)\n") }
}
