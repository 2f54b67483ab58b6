import Foundation
import Synchronization

/// The result of a finished child process.
struct ChildResult: Sendable {
    var status: Int32
    var output: String
    var errorOutput: String
}

/// A built product of the package under test (`prefs`), found beside the
/// test binary or, on macOS, beside the test bundle.
func productURL(_ name: String) -> URL {
    let start: URL
    if FileManager.default.fileExists(atPath: "/proc/self/exe") {
        start = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    } else if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
        start = bundle.bundleURL
    } else {
        start = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    }
    var directory = start.deletingLastPathComponent()
    while !FileManager.default.isExecutableFile(
        atPath: directory.appendingPathComponent(name).path),
        directory.path != "/"
    {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

/// Runs `executable` with `arguments` to its end; kills it and throws
/// ``DeadlineExceeded`` when it runs past `deadline`.
func run(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
    deadline: Duration = .seconds(60)
) async throws -> ChildResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = try ChildPipe()
    let errorOutput = try ChildPipe()
    process.standardOutput = output.writing
    process.standardError = errorOutput.writing
    process.standardInput = FileHandle.nullDevice
    let ended = AsyncStream<Int32>.makeStream()
    process.terminationHandler = { ended.continuation.yield($0.terminationStatus) }
    try process.run()
    // The child has its own copies: the outputs end when it exits.
    try? output.writing.close()
    try? errorOutput.writing.close()
    // Read both pipes while the child runs, so a full pipe never stops it.
    let outputText = Task.detached {
        String(decoding: output.reading.readDataToEndOfFile(), as: UTF8.self)
    }
    let errorText = Task.detached {
        String(decoding: errorOutput.reading.readDataToEndOfFile(), as: UTF8.self)
    }
    let shown = ([executable.lastPathComponent] + arguments).joined(separator: " ")
    do {
        let status = try await withDeadline(deadline, progress: named("`\(shown)` to end")) { _ in
            for await status in ended.stream { return status }
            throw CancellationError()
        }
        return ChildResult(
            status: status, output: await outputText.value, errorOutput: await errorText.value)
    } catch {
        process.terminate()
        throw error
    }
}

/// A ``Progress`` already waiting for `step`.
func named(_ step: String) -> Progress {
    let progress = Progress()
    progress.waiting(for: step)
    return progress
}

/// Runs the built `prefs` with `arguments`; throws unless it exits 0,
/// with what it printed.
@discardableResult
func prefs(_ arguments: String...) async throws -> ChildResult {
    try await prefs(arguments)
}

/// Runs the built `prefs` with `arguments`, in `environment` (by default
/// this process's); throws unless it exits 0, with what it printed.
@discardableResult
func prefs(_ arguments: [String], environment: [String: String]? = nil) async throws
    -> ChildResult
{
    let result = try await run(productURL("prefs"), arguments, environment: environment)
    guard result.status == 0 else {
        throw ChildFailed(
            command: (["prefs"] + arguments).joined(separator: " "), result: result)
    }
    return result
}

/// A child that exited with a status other than 0.
struct ChildFailed: Error, CustomStringConvertible {
    var command: String
    var result: ChildResult
    var description: String {
        "`\(command)` exited with \(result.status): \(result.errorOutput)\(result.output)"
    }
}
