import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on a monotonic clock.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Wall-clock nanoseconds, comparable between processes on one machine.
func wallClock() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000_000) }

func median(_ samples: [Double]) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The median of the ratios of samples taken side by side (`numerators[i]`
/// and `denominators[i]` measured one right after the other), so drift in
/// the machine's speed during the run cancels out.
func pairedRatio(_ numerators: [Double], _ denominators: [Double]) -> Double {
    median(zip(numerators, denominators).map { $0 / $1 })
}

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}

/// Times `body` once, in nanoseconds.
func time(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return Double(now() - start)
}

func timeAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let start = now()
    try await body()
    return Double(now() - start)
}

/// Human units for nanoseconds.
func format(nanoseconds: Double) -> String {
    if nanoseconds.isNaN { return "n/a" }
    if nanoseconds < 1_000 { return String(format: "%.0f ns", nanoseconds) }
    if nanoseconds < 1_000_000 { return String(format: "%.1f µs", nanoseconds / 1_000) }
    if nanoseconds < 1_000_000_000 { return String(format: "%.2f ms", nanoseconds / 1_000_000) }
    return String(format: "%.2f s", nanoseconds / 1_000_000_000)
}

/// Bytes the allocator has handed out and not had back, summed over all of
/// glibc's arenas (the store decodes on its own queue's thread, whose
/// allocations live in another arena than the main thread's), after asking
/// it to return what it can (`malloc_trim`); nil where not available.
///
/// Resident memory, which this used to count, moved by hundreds of KiB
/// depending on which freed pages the earlier rows left resident; bytes in
/// use do not depend on that. Read from `malloc_info`'s totals: the memory
/// the arenas hold from the system, less their free chunks, plus the blocks
/// mapped on their own.
func heapBytesInUse() -> Int? {
    #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        typealias Info = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        guard let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim"),
            let info = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info")
        else { return residentBytes() }
        _ = unsafeBitCast(trim, to: Trim.self)(0)
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return residentBytes() }
        _ = unsafeBitCast(info, to: Info.self)(0, stream)
        fclose(stream)
        guard let buffer else { return residentBytes() }
        defer { free(buffer) }
        let text = String(cString: buffer)
        // The totals over all arenas follow the last </heap>.
        guard let last = text.range(of: "</heap>", options: .backwards) else {
            return residentBytes()
        }
        let totals = text[last.upperBound...]
        func number(_ tag: String) -> Int {
            guard let found = totals.range(of: tag) else { return 0 }
            let rest = totals[found.upperBound...]
            guard let open = rest.range(of: "size=\""),
                let close = rest[open.upperBound...].firstIndex(of: "\"")
            else { return 0 }
            return Int(rest[open.upperBound..<close]) ?? 0
        }
        return number("<system type=\"current\"") - number("<total type=\"fast\"")
            - number("<total type=\"rest\"") + number("<total type=\"mmap\"")
    #else
        return nil
    #endif
}

/// Resident memory of this process in bytes (Linux), or nil.
func residentBytes() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else {
        return nil
    }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
