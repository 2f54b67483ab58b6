import Foundation

/// The shared libraries a process has mapped, as Linux lists them in
/// `/proc/PID/maps`: what a program really loaded, not only what its
/// binary names.
package enum MappedLibraries {
    /// Whether this system lists mappings in `/proc`.
    package static let available = FileManager.default.fileExists(atPath: "/proc/self/maps")

    /// The libraries that make up TLS on Linux: `FoundationNetworking` and
    /// the libcurl it is built on.
    package static let tls = ["libFoundationNetworking", "libcurl"]

    /// The libraries that make up ICU on Linux: its data (`_FoundationICU`,
    /// 40 MB) and `FoundationInternationalization`, which full Foundation
    /// loads and `FoundationEssentials` does not.
    package static let icu = ["lib_FoundationICU", "libFoundationInternationalization"]

    /// The path of every shared library mapped in process `pid`.
    package static func of(_ pid: Int32) throws -> Set<String> {
        // Read to the end: a file in /proc has no size to read up to.
        let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? maps.close() }
        return parse(String(decoding: try maps.readToEnd() ?? Data(), as: UTF8.self))
    }

    /// The shared libraries (`*.so`, `*.so.N`) in the text of a maps file.
    package static func parse(_ maps: String) -> Set<String> {
        Set(
            maps.split(separator: "\n").compactMap { line in
                guard let slash = line.firstIndex(of: "/") else { return nil }
                let path = String(line[slash...])
                let name = path.split(separator: "/").last ?? ""
                return name.hasSuffix(".so") || name.contains(".so.") ? path : nil
            })
    }

    /// Whether `libraries` hold the C library, as every dynamically linked
    /// program's do: the maps were read and parsed.
    package static func holdLibC(_ libraries: Set<String>) -> Bool {
        libraries.contains { ($0.split(separator: "/").last ?? "").hasPrefix("libc.so") }
    }

    /// Those of `libraries` that belong to TLS (``tls``).
    package static func tlsLibraries(in libraries: Set<String>) -> [String] {
        named(tls, in: libraries)
    }

    /// Those of `libraries` that belong to ICU (``icu``).
    package static func icuLibraries(in libraries: Set<String>) -> [String] {
        named(icu, in: libraries)
    }

    private static func named(_ names: [String], in libraries: Set<String>) -> [String] {
        libraries.filter { path in
            let name = path.split(separator: "/").last ?? ""
            return names.contains { name.hasPrefix($0) }
        }.sorted()
    }
}
