import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh directory for one test, removed when the test's scope ends.
final class TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init(in parent: String? = nil) throws {
        url = (parent.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("preferences-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A built product (`prefs`, `prefs-harness`) beside the test bundle.
func productURL(_ name: String) -> URL {
    // Linux: the test binary itself. macOS: the loaded .xctest bundle, which
    // sits in the same build directory as the products.
    let start: URL
    if FileManager.default.fileExists(atPath: "/proc/self/exe") {
        start = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    } else if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
        start = bundle.bundleURL
    } else {
        start = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    }
    var directory = start.deletingLastPathComponent()
    // On macOS the tests run inside a bundle: …/debug/X.xctest/Contents/MacOS/X.
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path),
        directory.path != "/"
    {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

/// The result of a finished child process.
struct ProcessOutput {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// Runs a product to completion.
@discardableResult
func run(
    _ product: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil
) throws -> ProcessOutput {
    let process = Process()
    process.executableURL = productURL(product)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let inPipe = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = inPipe
    try process.run()
    if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inPipe.fileHandleForWriting.close()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessOutput(
        status: process.terminationStatus,
        standardOutput: String(decoding: outData, as: UTF8.self),
        standardError: String(decoding: errData, as: UTF8.self))
}

/// A running child whose standard output is read line by line.
final class RunningProcess: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private var buffer = Data()

    init(_ product: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = productURL(product)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
    }

    /// The next line of output, or nil at end of output. Blocks until it arrives.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                return String(decoding: line, as: UTF8.self)
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    func kill(_ signal: Int32 = SIGKILL) {
        sendSignal(signal, to: process.processIdentifier)
    }

    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Bytes of a file, or nil.
func contents(_ url: URL) -> String? {
    (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
}

func write(_ text: String, to url: URL) throws {
    try Data(text.utf8).write(to: url)
}

/// `stat` identity of a file: inode and modification time.
func identity(_ url: URL) throws -> (inode: UInt64, modified: Int64) {
    let stamp = try #require(try Platform.fileStamp(url.path))
    return (stamp.inode, stamp.modifiedSeconds * 1_000_000_000 + stamp.modifiedNanoseconds)
}

func permissions(_ url: URL) throws -> UInt32 {
    try #require(try Platform.fileStamp(url.path)).mode
}

/// Sends a signal to a process.
func sendSignal(_ signal: Int32, to pid: Int32) {
    #if canImport(Glibc)
        _ = Glibc.kill(pid, signal)
    #else
        _ = Darwin.kill(pid, signal)
    #endif
}

/// A tmpfs mounted for one test (root on Linux only); unmounted at the end.
/// Tests that need a real read-only or full file system skip when it cannot
/// be mounted.
final class TmpfsMount {
    let directory: TemporaryDirectory
    var url: URL { directory.url }

    init?(size: String = "1m") {
        guard let directory = try? TemporaryDirectory() else { return nil }
        self.directory = directory
        guard
            (try? runTool(
                "/bin/mount",
                ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", directory.path])) == 0
        else { return nil }
    }

    func remount(readOnly: Bool) throws {
        let status = try runTool(
            "/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", directory.path])
        #expect(status == 0)
    }

    deinit { _ = try? runTool("/bin/umount", ["-l", directory.path]) }

    static var unavailableReason: String {
        "needs root and permission to mount a tmpfs (Linux)"
    }
}

@discardableResult
func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
    guard FileManager.default.isExecutableFile(atPath: path) else { return -1 }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Whether tmpfs mounts work here (checked once).
let canMountTmpfs: Bool = {
    TmpfsMount(size: "64k") != nil
}()
