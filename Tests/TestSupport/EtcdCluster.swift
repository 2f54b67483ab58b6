import Dispatch
import Foundation
import LocalEtcd
import Preferences
import PreferencesEtcd
import PreferencesEtcdTLS
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `etcd` server binary, when installed (Debian's `etcd-server`).
package let etcdServerPath: String? = findExecutable("etcd")
/// The `etcdctl` client (Debian's `etcd-client`).
package let etcdctlPath: String? = findExecutable("etcdctl")
/// Whether the etcd tests can run here.
package let etcdAvailable = etcdServerPath != nil && etcdctlPath != nil
package let etcdUnavailableReason: Comment = "etcd-server and etcd-client are not installed"

package func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin"] {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Runs blocking work (an etcd call, a child process) on a dispatch queue,
/// never on Swift's cooperative pool, and awaits its result.
package func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// A real etcd cluster for one test: one or three members on free loopback
/// ports, each with its own data directory in a temporary folder.
///
/// Every member runs under `timeout` (so even a test process that dies
/// cannot leave a server running for more than a few minutes) and is
/// killed when the cluster object goes away. All methods block: call them
/// through ``offPool(_:)`` from async tests.
package final class EtcdCluster: @unchecked Sendable {
    package struct Member {
        /// Its name, ports and data directory, and the command that runs it.
        package let spec: LocalEtcdMember
        /// The member's `timeout` wrapper, which runs the server.
        package var child: RunningProcess?
        package var name: String { spec.name }
        package var clientURL: URL { spec.clientURL }
    }

    /// The longest a member process may live, in seconds: five minutes
    /// (scaled) for a test's own cluster; the shared one lives as long as
    /// a whole run may.
    package let lifetime: Int

    /// Raft's heartbeat and election timeout, in milliseconds: etcd's own
    /// defaults (100 ms and 1 s), scaled with every other deadline. Half of
    /// them let a member kept from the processor for half a second (two
    /// cores running the whole suite) start an election; a killed leader is
    /// still replaced within a few seconds.
    package static let heartbeat = Int(TestTime.scaled(seconds: 100))
    package static let electionTimeout = Int(TestTime.scaled(seconds: 1_000))
    /// Data directories and logs; in memory (/dev/shm) where there is one,
    /// so members' fsyncs cost little.
    package let directory: TemporaryDirectory
    private(set) var members: [Member]
    package let token = "prefs-test-\(UUID().uuidString.prefix(8))"
    package let extraArguments: [String]
    private let lock = Locked(())

    /// With TLS: the server's certificate and key, and the authority that
    /// signed it (for `etcdctl`); clients then use `https://`.
    package struct TLS {
        package let certificate: String
        package let key: String
        package let authority: String
        package init(certificate: String, key: String, authority: String) {
            self.certificate = certificate
            self.key = key
            self.authority = authority
        }
    }
    package let tls: TLS?

    /// Starts `size` members and waits (up to 20 s, scaled) until the cluster has a leader.
    package init(
        size: Int = 1, extraArguments: [String] = [], tls: TLS? = nil, lifetime: Int = 300
    ) throws {
        self.tls = tls
        self.lifetime = Int(TestTime.scaled(seconds: Double(lifetime)))
        directory = try TemporaryDirectory(
            in: FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : nil)
        self.extraArguments = extraArguments
        members = []
        // A port can still be taken between its check and the member's
        // bind (by another program on the machine): then the cluster starts
        // again on other ports, in fresh data directories.
        for attempt in 1...Self.startAttempts {
            members = try LocalEtcdMember.cluster(
                size, named: "m", in: directory.path + "/start\(attempt)",
                scheme: tls == nil ? "http" : "https"
            ).map { Member(spec: $0, child: nil) }
            for index in members.indices { try launch(index, state: "new") }
            do {
                try waitForLeader(deadline: 20)
                return
            } catch  where attempt < Self.startAttempts && portWasTaken() {
                stopAll()
            } catch {
                // A cluster that never came up is stopped here, not left to `deinit`.
                stopAll()
                throw error
            }
        }
    }

    /// How many times a cluster is started on fresh ports when a member
    /// found one of its ports taken.
    package static let startAttempts = 3

    /// Whether a member's log says one of its ports was taken.
    private func portWasTaken() -> Bool {
        members.contains { member in
            (contents(directory.file("\(member.name).log")) ?? "").contains(
                "address already in use")
        }
    }

    deinit {
        for index in members.indices { kill(index) }
    }

    package var endpoints: [URL] { members.map { $0.clientURL } }
    package var endpointList: String { endpoints.map { $0.absoluteString }.joined(separator: ",") }

    /// A client configuration for the whole cluster, with TLS when it has TLS.
    package func configuration(timeout: TimeInterval = 5, credentials: EtcdCredentials? = nil)
        -> EtcdConfiguration
    {
        EtcdConfiguration(
            endpoints: endpoints, credentials: credentials, timeout: timeout,
            tls: tls == nil ? nil : .systemTrustStore)
    }

    /// A backend for `key` on this cluster.
    package func storage(
        _ key: String, timeout: TimeInterval = 5, credentials: EtcdCredentials? = nil,
        sharesState: Bool = true
    ) throws -> EtcdStorage {
        try EtcdStorage(
            configuration: configuration(timeout: timeout, credentials: credentials), key: key,
            sharesStateInProcess: sharesState)
    }

    private func launch(_ index: Int, state: String) throws {
        let member = members[index].spec
        let (program, arguments) = member.command(
            server: etcdServerPath!, cluster: members.map(\.spec), state: state, token: token,
            lifetime: lifetime,
            // etcd dies with `timeout` (Linux only, as `timeout` is), which dies with the tests.
            before: [ChildCommand.setpriv, "--pdeathsig", "KILL"],
            extra: [
                "--heartbeat-interval", "\(Self.heartbeat)",
                "--election-timeout", "\(Self.electionTimeout)",
            ] + extraArguments
                + (tls.map { ["--cert-file", $0.certificate, "--key-file", $0.key] } ?? []))
        let command = ChildCommand(
            program: program, arguments, output: .log(directory.path + "/\(member.name).log"))
        let child = try command.start()
        lock.withLock { _ in members[index].child = child }
    }

    /// The etcd process under a member's `timeout` wrapper.
    private func serverPID(_ index: Int) -> Int32? {
        guard let wrapper = members[index].child?.process, wrapper.isRunning else { return nil }
        return LocalEtcdMember.server(underWrapper: wrapper.processIdentifier)
    }

    /// Kills a member with SIGKILL and waits (up to 10 s, scaled) until it is gone;
    /// a member still there after that is recorded as a test issue.
    ///
    /// The signal goes to the server, to the wrapper's process group and to
    /// the wrapper: `timeout` puts itself in a group of its own before it
    /// starts the server, so a server started a moment ago, not yet listed
    /// as its child, dies with the group; a wrapper killed before it made
    /// the group has started no server.
    package func kill(_ index: Int) {
        guard let wrapper = members[index].child else { return }
        if let server = serverPID(index) { sendSignal(SIGKILL, to: server) }
        if wrapper.process.isRunning {
            sendSignal(SIGKILL, to: -wrapper.process.processIdentifier)
            wrapper.kill()
        }
        do {
            _ = try wrapper.wait(timeout: .seconds(10))
        } catch {
            Issue.record(
                "etcd member \(members[index].name) was still running after SIGKILL: \(error)")
        }
        lock.withLock { _ in members[index].child = nil }
    }

    /// Stops a member with SIGSTOP: it keeps its sockets open and answers
    /// nothing, like a machine gone without closing its connections.
    package func pause(_ index: Int) {
        if let server = serverPID(index) { sendSignal(SIGSTOP, to: server) }
    }

    /// Lets a member stopped with ``pause(_:)`` go on (SIGCONT).
    package func resume(_ index: Int) {
        if let server = serverPID(index) { sendSignal(SIGCONT, to: server) }
    }

    /// Stops every member (SIGKILL).
    package func stopAll() {
        for index in members.indices { kill(index) }
    }

    /// Starts a stopped member again on its data directory, and waits
    /// until it answers (up to 20 s).
    package func restart(_ index: Int) throws {
        try launch(index, state: "existing")
        try waitForLeader(deadline: 20, members: [index])
    }

    /// Restarts every member and waits for a leader.
    package func restartAll() throws {
        for index in members.indices { try launch(index, state: "existing") }
        try waitForLeader(deadline: 20)
    }
}
