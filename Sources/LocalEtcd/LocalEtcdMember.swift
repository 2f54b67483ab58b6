#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One member of an etcd cluster on loopback, started for the tests or the
/// benchmark: its name, ports and data directory, and the command line
/// that runs it.
///
/// The server runs under `timeout --signal=KILL` (coreutils), so that no
/// member outlives the run that started it by more than its lifetime, even
/// when that run is killed before it can stop the member.
package struct LocalEtcdMember: Sendable {
    package let name: String
    package let clientPort: Int
    package let peerPort: Int
    package let dataDirectory: String
    /// `http`, or `https` for a member given a certificate.
    package var scheme = "http"

    package var clientURL: URL { URL(string: "\(scheme)://127.0.0.1:\(clientPort)")! }
    package var peerURL: String { "http://127.0.0.1:\(peerPort)" }

    package init(
        name: String, clientPort: Int, peerPort: Int, dataDirectory: String,
        scheme: String = "http"
    ) {
        self.name = name
        self.clientPort = clientPort
        self.peerPort = peerPort
        self.dataDirectory = dataDirectory
        self.scheme = scheme
    }

    /// `count` members named `prefix0`, `prefix1`, … on free loopback
    /// ports (``LoopbackPorts/free(_:)``), each with its data directory
    /// named after it in `directory`.
    package static func cluster(
        _ count: Int, named prefix: String, in directory: String, scheme: String = "http"
    ) throws(LoopbackPorts.Failure) -> [LocalEtcdMember] {
        var ports = try LoopbackPorts.free(2 * count)
        return (0..<count).map { index in
            LocalEtcdMember(
                name: "\(prefix)\(index)", clientPort: ports.removeFirst(),
                peerPort: ports.removeFirst(), dataDirectory: "\(directory)/\(prefix)\(index)",
                scheme: scheme)
        }
    }

    /// The program that runs this member of `cluster`, and its arguments:
    /// `timeout` with `lifetime` seconds, then `before` (a wrapper such as
    /// `setpriv --pdeathsig KILL`), then `server` with the member's own
    /// options, errors only logged, and `extra`.
    package func command(
        server: String, cluster: [LocalEtcdMember], state: String = "new", token: String,
        lifetime: Int, before: [String] = [], extra: [String] = []
    ) -> (program: String, arguments: [String]) {
        let initialCluster = cluster.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ",")
        let client = clientURL.absoluteString
        return (
            "/usr/bin/timeout",
            ["--signal=KILL", "\(lifetime)"] + before + [
                server,
                "--name", name, "--data-dir", dataDirectory,
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
                "--initial-cluster", initialCluster, "--initial-cluster-state", state,
                "--initial-cluster-token", token,
                "--logger", "zap", "--log-level", "error",
            ] + extra
        )
    }

    /// The server under a member's `timeout` process `wrapper` (its first
    /// child, from `/proc`); nil when it has none or there is no `/proc`.
    package static func server(underWrapper wrapper: Int32) -> Int32? {
        let path = "/proc/\(wrapper)/task/\(wrapper)/children"
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.flatMap {
            Int32($0)
        }
    }
}
