import Foundation
import PreferencesTestSupport
import Testing

/// `prefs` links no TLS and no ICU: on a file or an `http` etcd endpoint it
/// maps no `FoundationNetworking`, no libcurl, no `_FoundationICU` and no
/// `FoundationInternationalization`; `prefs-tls`, which it hands `https`
/// endpoints to, does.
@Suite(
    .serialized, .takesTurns(.processes),
    .enabled(if: MappedLibraries.available, "needs /proc/PID/maps (Linux)"),
    .scaledTimeLimit(minutes: 3))
struct CLILinkedLibrariesTests {
    /// The libraries `product` maps while it runs `watch` on the store
    /// `arguments` select, which must hold a value: read once the watch
    /// has printed it, then the watch is killed.
    func librariesWatching(_ arguments: [String], of product: String = "prefs") async throws
        -> Set<String>
    {
        let watch = try RunningProcess(product, arguments + ["watch"])
        // The current state comes first: the program is running by then.
        let first = try await watch.nextLine()
        #expect(first?.contains(#""key":"a""#) == true, "\(watch.transcript)")
        let libraries = try MappedLibraries.of(watch.process.processIdentifier)
        watch.kill()
        _ = try await watch.exit()
        #expect(MappedLibraries.holdLibC(libraries), "\(libraries)")
        return libraries
    }

    @Test func prefsOnAFileMapsNeitherTLSNorICU() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        let libraries = try await librariesWatching(["--file", workspace.store.path])
        #expect(MappedLibraries.tlsLibraries(in: libraries) == [])
        #expect(MappedLibraries.icuLibraries(in: libraries) == [])

        // Nor does its binary name any, for `get` or any other command.
        let linked = try await runProgram("/usr/bin/ldd", [productURL("prefs").path])
        #expect(linked.status == 0, "\(linked.standardError)")
        #expect(
            (MappedLibraries.tls + MappedLibraries.icu).allSatisfy {
                !linked.standardOutput.contains($0)
            }, "\(linked.standardOutput)")
    }

    @Test(.enabled(if: etcdAvailable, etcdUnavailableReason))
    func prefsOnAnHTTPEtcdEndpointMapsNeitherTLSNorICU() async throws {
        let cluster = try await SharedEtcd.cluster()
        let etcd = ["--etcd", cluster.endpointList, "--key", uniqueKey("cli-maps")]
        let set = try await runChild("prefs", etcd + ["set", "a", "1"])
        #expect(set.status == 0, "\(set.standardError)")
        let libraries = try await librariesWatching(etcd)
        #expect(MappedLibraries.tlsLibraries(in: libraries) == [])
        #expect(MappedLibraries.icuLibraries(in: libraries) == [])
    }

    /// What the two tests above look for is there when TLS is linked, and
    /// with it full Foundation.
    @Test func prefsTLSMapsTheTLSAndICULibraries() async throws {
        let workspace = try CLIWorkspace()
        try await workspace.prefs("set", "a", "1")
        let libraries = try await librariesWatching(
            ["--file", workspace.store.path], of: "prefs-tls")
        let found =
            MappedLibraries.tlsLibraries(in: libraries)
            + MappedLibraries.icuLibraries(in: libraries)
        for name in MappedLibraries.tls + MappedLibraries.icu {
            #expect(found.contains { $0.contains("/" + name) }, "\(found)")
        }
    }
}
