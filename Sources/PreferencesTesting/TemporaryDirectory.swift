#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A fresh directory, removed with everything in it when the value goes
/// away: one for each check of the contract and each of the package's
/// tests. `package`, as the deadlines are: how this package tests itself.
package final class TemporaryDirectory: Sendable {
    package let url: URL
    package var path: String { url.path }

    /// A new directory in `parent`, or in the system's temporary directory.
    package init(in parent: String? = nil) throws {
        url = (parent.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("preferences-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The file `name` in the directory.
    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
