import Foundation
import PreferencesEtcd

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The main package's etcd launcher and port finder (`LocalEtcdMember`, `LoopbackPorts`) are not
// a product, which another package cannot import; this one-member launcher is this package's own.

/// A one-member etcd cluster for one test: its own process on free
/// loopback ports with a data directory in a fresh temporary directory,
/// killed by ``stop()`` (or when the value goes away).
final class TestEtcd: Sendable {
    let endpoint: String
    private let process: Process
    private let directory: TemporaryDirectory

    /// Whether `etcd` can be run here.
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: executable.path)
    }

    private static var executable: URL {
        for path in ["/usr/bin/etcd", "/usr/local/bin/etcd", "/opt/homebrew/bin/etcd"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: "/usr/bin/etcd")
    }

    /// Starts the member and waits until it answers, for at most `deadline`.
    init(deadline: Duration = .seconds(30)) async throws {
        directory = try TemporaryDirectory()
        let ports = try Self.freeLoopbackPorts(2)
        let client = "http://127.0.0.1:\(ports[0])"
        let peer = "http://127.0.0.1:\(ports[1])"
        endpoint = client
        process = Process()
        process.executableURL = Self.executable
        process.arguments = [
            "--name", "member", "--data-dir", directory.file("data").path,
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", "member=\(peer)", "--initial-cluster-state", "new",
            "--initial-cluster-token", "preferences-configuration-\(UUID().uuidString)",
        ]
        let log = directory.file("etcd.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let endpoint = self.endpoint
        do {
            try await withDeadline(deadline, progress: named("etcd at \(endpoint) to answer")) {
                _ in
                while !(await Self.answers(endpoint)) {
                    // A member answers about a second after it starts; ask again shortly.
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
        } catch {
            stop()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw EtcdFailed(reason: "\(error)", log: String(text.suffix(2000)))
        }
    }

    /// The member as the etcd backend takes it.
    var configuration: EtcdConfiguration {
        get throws { try EtcdConfiguration(endpoints: endpoint) }
    }

    /// Kills the member and waits for it to end.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }

    /// Whether the member at `endpoint` answers a status request.
    private static func answers(_ endpoint: String) async -> Bool {
        var request = URLRequest(url: URL(string: "\(endpoint)/v3/maintenance/status")!)
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        request.timeoutInterval = 1
        guard let (_, response) = try? await URLSession.shared.data(for: request) else {
            return false
        }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    /// `count` ports that were free on loopback a moment ago, chosen at
    /// random below the range the kernel takes connections' local ports
    /// from, so no connection made meanwhile takes one.
    private static func freeLoopbackPorts(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        for _ in 0..<1000 where ports.count < count {
            let port = Int.random(in: 20_000...30_000)
            if !ports.contains(port) && canBind(port) { ports.append(port) }
        }
        guard ports.count == count else {
            throw EtcdFailed(reason: "no free loopback ports", log: "")
        }
        return ports
    }

    private static func canBind(_ port: Int) -> Bool {
        #if canImport(Glibc)
            let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let handle = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard handle >= 0 else { return false }
        defer { close(handle) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// An etcd member that did not start, with the end of its log.
struct EtcdFailed: Error, CustomStringConvertible {
    var reason: String
    var log: String
    var description: String { "etcd did not start: \(reason)\n\(log)" }
}
