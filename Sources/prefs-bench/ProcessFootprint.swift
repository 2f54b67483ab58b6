import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a program costs beyond its own code: the shared libraries its
/// running process maps, whether ICU or libcurl is among them, and the size
/// of its binary stripped (P12).
struct ProcessFootprint {
    /// The shared libraries mapped (`*.so`, `*.so.N` in `/proc/PID/maps`).
    var libraries: Set<String>
    /// The ICU the process holds: the `_FoundationICU` or `libicu`
    /// library it maps, or `data linked in` (ICU's data in the executable);
    /// nil for none.
    var icu: String?
    /// Whether it maps libcurl (TLS on Linux).
    var curl: Bool
    /// Whether it maps the Swift runtime's shared library: linked
    /// dynamically, not statically.
    var dynamicSwiftRuntime: Bool
    /// The executable's size once stripped; nil without `strip`.
    var strippedBytes: Int?

    /// The footprint of `executable`, whose process mapped what `maps`
    /// (the text of its `/proc/PID/maps`) lists.
    init(maps: String, executable: URL, scratch: URL) {
        libraries = Self.libraries(inMaps: maps)
        let names = libraries.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
        icu =
            names.first { $0.contains("FoundationICU") || $0.hasPrefix("libicu") }
            ?? (Self.file(executable, contains: "icudt") ? "data linked in" : nil)
        curl = names.contains { $0.hasPrefix("libcurl") }
        dynamicSwiftRuntime = names.contains { $0.hasPrefix("libswiftCore") }
        strippedBytes = Self.strippedSize(of: executable, scratch: scratch)
    }

    /// The footprint of `executable` started with `arguments`, read once it
    /// has printed its first line (it runs until killed, as `prefs watch`).
    static func whileRunning(_ executable: URL, _ arguments: [String], scratch: URL) throws
        -> ProcessFootprint
    {
        let child = try BenchChild(executable.path, arguments, output: .pipe)
        defer { child.kill() }
        guard child.output?.readLine() != nil else {
            throw BenchFailure("\(executable.lastPathComponent) \(arguments) printed nothing")
        }
        let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(child.pid)/maps"))
        defer { try? maps.close() }
        // Read to the end: a file in /proc has no size to read up to.
        let text = String(decoding: try maps.readToEnd() ?? Data(), as: UTF8.self)
        return ProcessFootprint(maps: text, executable: executable, scratch: scratch)
    }

    /// The footprint of `prefs-harness maps FILE`: a service that opens a
    /// store on a file, sets a key, and prints its own maps.
    static func ofService(_ harness: URL, store: URL, scratch: URL) throws -> ProcessFootprint {
        let child = try BenchChild(harness.path, ["maps", store.path], output: .pipe)
        let text = String(decoding: child.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let ending = child.wait()
        guard ending == .exited(0) else { throw BenchFailure("prefs-harness maps \(ending)") }
        return ProcessFootprint(maps: text, executable: harness, scratch: scratch)
    }

    /// One line for the table: `5 libraries, no ICU, no libcurl, 5.9 MiB stripped`.
    var summary: String {
        var parts = ["\(libraries.count) libraries"]
        parts.append(icu.map { "ICU (\($0))" } ?? "no ICU")
        parts.append(curl ? "libcurl" : "no libcurl")
        parts.append(
            strippedBytes.map { "\(format(bytes: Double($0))) stripped" }
                ?? "size n/a (no strip)")
        return parts.joined(separator: ", ")
    }

    /// The shared libraries in the text of a maps file.
    static func libraries(inMaps maps: String) -> Set<String> {
        Set(
            maps.split(separator: "\n").compactMap { line in
                guard let slash = line.firstIndex(of: "/") else { return nil }
                let path = String(line[slash...])
                let name = path.split(separator: "/").last ?? ""
                return name.hasSuffix(".so") || name.contains(".so.") ? path : nil
            })
    }

    /// Whether the bytes of `file` hold `text` (ICU's data, linked into a
    /// binary, names its packages `icudtNN`).
    static func file(_ file: URL, contains text: String) -> Bool {
        guard let data = try? Data(contentsOf: file, options: .alwaysMapped) else { return false }
        let pattern = Array(text.utf8)
        return data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, let first = pattern.first else { return false }
            var offset = 0
            // Each occurrence of the first byte (memchr), then the rest.
            while offset + pattern.count <= bytes.count,
                let hit = memchr(
                    base + offset, Int32(first), bytes.count - offset - pattern.count + 1)
            {
                if memcmp(hit, pattern, pattern.count) == 0 { return true }
                offset = base.distance(to: hit) + 1
            }
            return false
        }
    }

    /// The size of a stripped copy of `binary`, or nil without `strip`.
    static func strippedSize(of binary: URL, scratch: URL) -> Int? {
        guard let strip = executable("strip") else { return nil }
        let copy = scratch.appendingPathComponent("stripped-\(binary.lastPathComponent)")
        defer { try? FileManager.default.removeItem(at: copy) }
        guard (try? run(strip, ["-o", copy.path, binary.path])) == 0 else { return nil }
        let attributes = try? FileManager.default.attributesOfItem(atPath: copy.path)
        return (attributes?[.size] as? NSNumber)?.intValue
    }
}

/// The yardstick of `prefs --version`: a Swift program that only prints,
/// compiled here with `swiftc -O`, its Swift runtime linked statically when
/// `static` (as `swift build --static-swift-stdlib` links it). It imports
/// `FoundationEssentials` where that is a module, as the library does.
/// Returns nil without `swiftc` or when the build fails.
func buildPrintOnlyProgram(in directory: URL, static: Bool) throws -> URL? {
    guard let swiftc = executable("swiftc") else { return nil }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let source = directory.appendingPathComponent("main.swift")
    let program = directory.appendingPathComponent("print-only")
    try Data(
        """
        #if canImport(FoundationEssentials)
            import FoundationEssentials
        #else
            import Foundation
        #endif

        print("print-only 1.0")

        """.utf8
    ).write(to: source)
    var arguments = ["-O", source.path, "-o", program.path]
    arguments += ["-module-cache-path", directory.appendingPathComponent("cache").path]
    if `static` { arguments.append("-static-stdlib") }
    return try run(swiftc, arguments) == 0 ? program : nil
}

/// Runs `path` to its end, its output discarded; returns its exit status.
private func run(_ path: String, _ arguments: [String]) throws -> Int32 {
    let child = try BenchChild(path, arguments, output: .discarded, errors: .discarded)
    return child.wait().code
}
