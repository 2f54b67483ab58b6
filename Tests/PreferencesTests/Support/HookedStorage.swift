import Foundation
import PreferencesTestSupport

@testable import Preferences

/// Wraps a backend so a test can act at an exact point of the store's work:
/// `afterRead` runs on every document read, and `beforeRevision` runs before
/// every revision check and may throw to make it fail. Both run on the
/// store's queue. `watchWith`, when given, starts the watch instead of the
/// backend (a chosen watch mechanism, say).
package final class HookedStorage: PreferencesStorage {
    package typealias WatchStarter =
        @Sendable (@escaping @Sendable () -> Void) throws -> (any StorageWatch)?
    package let base: any PreferencesStorage
    package let afterRead: @Sendable (StoredContents) -> Void
    package let beforeRevision: @Sendable () throws -> Void
    package let watchWith: WatchStarter?

    package init(
        _ base: any PreferencesStorage,
        afterRead: @escaping @Sendable (StoredContents) -> Void = { _ in },
        beforeRevision: @escaping @Sendable () throws -> Void = {},
        watchWith: WatchStarter? = nil
    ) {
        self.base = base
        self.afterRead = afterRead
        self.beforeRevision = beforeRevision
        self.watchWith = watchWith
    }

    package var location: String { base.location }
    package var identity: String? { nil }
    package func read() throws -> StoredContents {
        let contents = try base.read()
        afterRead(contents)
        return contents
    }
    package func currentRevision() throws -> StorageRevision {
        try beforeRevision()
        return try base.currentRevision()
    }
    package func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        try base.write(bytes, ifRevision: expected)
    }
    package func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        try base.withExclusiveAccess(body)
    }
    package func setAsideCorrupt(stamp: String) throws -> String {
        try base.setAsideCorrupt(stamp: stamp)
    }
    package func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
        if let watchWith { return try watchWith(onChange) }
        return try base.watch(onChange)
    }
}
