/// Faults the tests inject into the shim, so that failures the system
/// rarely produces on demand (a directory fsync that fails) can be tested.
/// Each fault is bound to one path, so tests running side by side do not
/// see each other's faults; with none injected, the check is one lock and an
/// empty-dictionary test.
extension Platform {
    /// An operation that can be made to fail.
    enum FaultPoint: Hashable, Sendable {
        /// `fsync` of a directory (after a rename into it, or after `mkdir`).
        case directorySync
        /// Writing the write generation into a lock file.
        case generationWrite
    }

    private struct FaultKey: Hashable {
        var point: FaultPoint
        var path: String
    }

    private static let faults = Locked<[FaultKey: Int32]>([:])

    /// From now on, `point` at `path` fails with `code` until ``clearFault(_:at:)``.
    static func injectFault(_ point: FaultPoint, at path: String, code: Int32) {
        faults.withLock { $0[FaultKey(point: point, path: path)] = code }
    }

    static func clearFault(_ point: FaultPoint, at path: String) {
        faults.withLock { $0[FaultKey(point: point, path: path)] = nil }
    }

    /// The errno an injected fault makes `point` at `path` fail with, or nil.
    static func injectedFault(_ point: FaultPoint, at path: String) -> Int32? {
        faults.withLock { $0.isEmpty ? nil : $0[FaultKey(point: point, path: path)] }
    }
}
