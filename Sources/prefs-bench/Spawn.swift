import Foundation
import ProcessSpawning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child of the benchmark, started as a shell starts one
/// (``SpawnedProcess``: `posix_spawn`, no descriptor but its standard
/// streams passed on), with its pipes as file handles, which close when
/// they go away.
struct BenchChild {
    let process: SpawnedProcess
    /// Its standard input, with `input: .pipe`.
    let input: FileHandle?
    /// Its standard output, with `output: .pipe`.
    let output: FileHandle?

    /// Starts `path` with `arguments` and this process's environment with
    /// `environment` laid over it.
    init(
        _ path: String, _ arguments: [String], environment: [String: String] = [:],
        input: SpawnedProcess.Stream = .inherited, output: SpawnedProcess.Stream = .inherited,
        errors: SpawnedProcess.Stream = .inherited
    ) throws {
        do {
            process = try SpawnedProcess(
                path, arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                input: input, output: output, errors: errors)
        } catch {
            throw BenchFailure("\(error)")
        }
        self.input = process.input.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.output = process.output.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    var pid: pid_t { process.pid }

    /// Waits for it to end and reaps it.
    func wait() -> SpawnedProcess.Ending { process.wait() }

    /// Kills it with SIGKILL and reaps it.
    func kill() {
        process.send(SIGKILL)
        _ = process.wait()
    }
}

/// Runs `path` with `arguments`, reads its standard output to the end, and
/// waits for it: a whole process as a shell starts one. Foundation's
/// `Process` adds its own cost on the parent's side (on Linux it closes
/// every descriptor up to the limit in the child), which is not the
/// program's.
/// Returns the nanoseconds from the spawn to the exit, the exit status and
/// the number of lines printed.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> (
    nanoseconds: Double, status: Int32, lines: Int
) {
    let started = DispatchTime.now().uptimeNanoseconds
    let child = try BenchChild(path, arguments, output: .pipe)
    var lines = 0
    while let data = try child.output?.read(upToCount: 65536), !data.isEmpty {
        lines += data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
    let ending = child.wait()
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started)
    return (elapsed, ending == .exited(0) ? 0 : ending.code, lines)
}

extension FileHandle {
    /// One line, read a byte at a time (the child's first line only).
    func readLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            let byte = readData(ofLength: 1)
            guard let first = byte.first else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if first == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
    }
}
