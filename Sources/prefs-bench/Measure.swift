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

/// Resident memory after asking the allocator to return freed memory to
/// the system (glibc's `malloc_trim`, looked up at run time), so that what
/// is counted is memory still in use; nil where not available.
func heapBytesInUse() -> Int? {
    #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        return residentBytes()
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
