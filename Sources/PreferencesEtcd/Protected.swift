import Foundation

/// A value guarded by a lock (`NSLock`, a pthread mutex that
/// ThreadSanitizer understands).
package final class Protected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
