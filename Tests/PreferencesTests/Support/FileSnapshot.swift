import Foundation
import Testing

@testable import Preferences

/// The store file at `url` as its bytes decode now, on their own: what a
/// new process would read. A second store handle on the same file shares
/// this process's in-memory state (S9) and may never read the file, so a
/// test that says "in the file" reads it through this.
func fileSnapshot(_ url: URL) throws -> PreferencesSnapshot {
    let bytes = try #require(
        FileManager.default.contents(atPath: url.path), "no file at \(url.path)")
    let document = try StoreDocument.decode(
        Array(bytes), file: url.path, limits: PreferencesLimits())
    return PreferencesSnapshot(document, registeredDefaults: [:])
}
