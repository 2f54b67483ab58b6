import Foundation
import PreferencesTestSupport
import Testing

/// A service that keeps its settings in files loads no TLS and no ICU:
/// `https` for etcd is a library of its own (`PreferencesEtcdTLS`), which
/// only a service using it links, and the library imports
/// `FoundationEssentials`, not full Foundation.
@Suite(
    .enabled(if: MappedLibraries.available, "needs /proc/PID/maps (Linux)"),
    .scaledTimeLimit(minutes: 2))
struct LinkedLibrariesTests {
    @Test func aServiceOnFilesMapsNeitherTLSNorICU() async throws {
        let directory = try TemporaryDirectory()
        // prefs-harness links Preferences and PreferencesEtcd, as a service
        // that may use either does; here it opens a file and writes to it.
        let result = try await runChild(
            "prefs-harness", ["maps", directory.file("settings.json").path])
        #expect(result.status == 0, "\(result.standardError)")
        let libraries = MappedLibraries.parse(result.standardOutput)
        #expect(MappedLibraries.holdLibC(libraries), "\(result.standardOutput)")
        #expect(MappedLibraries.tlsLibraries(in: libraries) == [])
        #expect(MappedLibraries.icuLibraries(in: libraries) == [])
    }
}
