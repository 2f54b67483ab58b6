import Foundation
import PreferencesTestSupport
import PreferencesTesting
import ProcessSpawning
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one way the tool (its editor), the crash explorer and the benchmark
/// start a program: only the standard streams reach the child, and it says
/// how the child ended.
@Suite(.scaledTimeLimit(minutes: 2)) struct SpawnedProcessTests {
    /// A descriptor this process holds without `O_CLOEXEC` (as a lock or a
    /// socket opened by other code may be) is not open in the child: it
    /// lists only standard input, output and error in its own `/proc`
    /// entry.
    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
            "lists a child's descriptors in /proc (Linux)"))
    func aChildHoldsOnlyItsStandardStreams() async throws {
        let directory = try TemporaryDirectory()
        let file = open(directory.file("held").path, O_CREAT | O_WRONLY, 0o600)
        try #require(file >= 0, "opening \(directory.file("held").path)")
        // A copy at 200 or above, inheritable: F_DUPFD sets no FD_CLOEXEC.
        let held = fcntl(file, F_DUPFD, 200)
        close(file)
        try #require(held >= 200)
        defer { close(held) }

        let listing = try await run("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(listing.ending == .exited(0))
        #expect(
            listing.output.split(whereSeparator: \.isWhitespace) == ["0", "1", "2"],
            "the child's descriptors, with \(held) open here")
    }

    /// The exit status, or the signal that ended the child.
    @Test func itSaysHowTheChildEnded() async throws {
        #expect(try await run("/bin/sh", ["-c", "exit 3"]).ending == .exited(3))
        #expect(try await run("/bin/sh", ["-c", "kill -9 $$"]).ending == .killed(signal: 9))
    }

    /// A program that is not there fails at the start, naming it.
    @Test func aMissingProgramIsNamed() {
        #expect {
            _ = try SpawnedProcess("/nonexistent/editor", [], environment: [:])
        } throws: { error in
            "\(error)" == "cannot start /nonexistent/editor: No such file or directory"
        }
    }

    /// Runs `path` with its standard input and error on /dev/null, and
    /// returns what it printed and how it ended.
    private func run(_ path: String, _ arguments: [String]) async throws -> (
        output: String, ending: SpawnedProcess.Ending
    ) {
        let child = try SpawnedProcess(
            path, arguments, environment: [:], input: .discarded, output: .pipe,
            errors: .discarded)
        return try await onOwnThread("\(path) \(arguments.joined(separator: " "))") {
            let output = child.readOutputToEnd()
            return (String(decoding: output, as: UTF8.self), child.wait())
        }
    }
}
