import Dispatch
import Foundation
import Preferences
import PreferencesEtcd
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
        package let name: String
        package let clientPort: Int
        package let peerPort: Int
        package let dataDirectory: String
        package var process: Process?
        /// Signalled when `process` has exited.
        package var exited: DispatchSemaphore?
        package var scheme = "http"
        package var clientURL: URL { URL(string: "\(scheme)://127.0.0.1:\(clientPort)")! }
        package var peerURL: String { "http://127.0.0.1:\(peerPort)" }
    }

    /// The longest a member process may live.
    package static let lifetime = 300
    /// Data directories and logs; in memory (/dev/shm) where there is one,
    /// so members' fsyncs cost little.
    package let directory: TemporaryDirectory
    private(set) var members: [Member]
    package let token = "prefs-test-\(UUID().uuidString.prefix(8))"
    package let extraArguments: [String]
    private let lock = NSLock()

    /// Starts `size` members and waits (up to 20 s) until the cluster has a leader.
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

    package init(size: Int = 1, extraArguments: [String] = [], tls: TLS? = nil) throws {
        self.tls = tls
        directory = try TemporaryDirectory(
            in: FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : nil)
        self.extraArguments = extraArguments
        members = []
        // A port can still be taken between its check and the member's
        // bind (by another program on the machine): then the cluster starts
        // again on other ports, in fresh data directories.
        for attempt in 1...Self.startAttempts {
            var ports = try Self.freePorts(2 * size)
            members = (0..<size).map { index in
                Member(
                    name: "m\(index)", clientPort: ports.removeFirst(),
                    peerPort: ports.removeFirst(),
                    dataDirectory: directory.path + "/start\(attempt)/m\(index)", process: nil,
                    scheme: tls == nil ? "http" : "https")
            }
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

    /// Ports never handed out before in this process.
    private static let handedOut = LockedBox<Set<Int>>([])

    /// Ports that were free a moment ago, chosen at random outside the
    /// range the kernel takes the local ports of connections from
    /// (`ip_local_port_range`). A port from that range (bind port 0, then
    /// release it) can be taken by any connection made before the member
    /// binds it, and the tests' etcd clients make many: the member then
    /// fails with "address already in use". No port is handed out twice in
    /// one process, so two clusters never share one.
    package static func freePorts(_ count: Int) throws -> [Int] {
        let range = portsOutsideTheLocalRange()
        var ports: [Int] = []
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 where ports.count < count {
            let port = Int.random(in: range, using: &generator)
            guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            if let socket = bindLoopback(port: port) {
                close(socket)
                ports.append(port)
            }
        }
        guard ports.count == count else { throw PortError() }
        return ports
    }

    /// Ports no connection is given a local port from: below the kernel's
    /// range where there is room, else above it.
    package static func portsOutsideTheLocalRange() -> ClosedRange<Int> {
        let text = contents(URL(fileURLWithPath: "/proc/sys/net/ipv4/ip_local_port_range"))
        let bounds = (text ?? "").split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        // Without the file (Darwin): the IANA dynamic range, Darwin's default.
        let (low, high) = bounds.count == 2 ? (bounds[0], bounds[1]) : (49_152, 65_535)
        if low - 10_000 >= 2_000 { return 10_000...(low - 1) }
        if 65_535 - high >= 2_000 { return (high + 1)...65_535 }
        return 1_024...65_535
    }

    /// 127.0.0.1 at `port`, as the socket calls take it.
    package static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A socket bound to `port` on loopback (0: any free port), with
    /// `SO_REUSEADDR` as etcd's own listeners have it unless asked not to;
    /// nil when it cannot be bound.
    package static func bindLoopback(port: Int, reuseAddress: Bool = true) -> Int32? {
        #if canImport(Glibc)
            let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let handle = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard handle >= 0 else { return nil }
        var reuse: Int32 = reuseAddress ? 1 : 0
        _ = setsockopt(
            handle, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard bound else {
            close(handle)
            return nil
        }
        return handle
    }

    /// Ports bound on loopback and not listening: a connection to one is
    /// refused, and no other process can take it until its socket is closed.
    package static func boundPorts(_ count: Int) throws -> (ports: [Int], sockets: [Int32]) {
        var sockets: [Int32] = []
        var ports: [Int] = []
        for _ in 0..<count {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            guard let socket = bindLoopback(port: 0, reuseAddress: false),
                withUnsafeMutablePointer(
                    to: &address,
                    {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            getsockname(socket, $0, &length) == 0
                        }
                    })
            else {
                for socket in sockets { close(socket) }
                throw PortError()
            }
            sockets.append(socket)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return (ports, sockets)
    }

    package struct PortError: Error {}

    package var endpoints: [URL] { members.map { $0.clientURL } }
    package var endpointList: String { endpoints.map { $0.absoluteString }.joined(separator: ",") }

    /// A client configuration for the whole cluster.
    package func configuration(timeout: TimeInterval = 5, credentials: EtcdCredentials? = nil)
        -> EtcdConfiguration
    {
        EtcdConfiguration(endpoints: endpoints, credentials: credentials, timeout: timeout)
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
        let member = members[index]
        let initialCluster = members.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ",")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments =
            [
                "--signal=KILL", "\(Self.lifetime)", etcdServerPath!,
                "--name", member.name, "--data-dir", member.dataDirectory,
                "--listen-client-urls", member.clientURL.absoluteString,
                "--advertise-client-urls", member.clientURL.absoluteString,
                "--listen-peer-urls", member.peerURL,
                "--initial-advertise-peer-urls", member.peerURL,
                "--initial-cluster", initialCluster,
                "--initial-cluster-state", state,
                "--initial-cluster-token", token,
                "--heartbeat-interval", "50", "--election-timeout", "500",
                "--logger", "zap", "--log-level", "error",
            ] + extraArguments
            + (tls.map { ["--cert-file", $0.certificate, "--key-file", $0.key] } ?? [])
        let log = FileHandle(
            forWritingAtPath: createLog(directory.path + "/\(member.name).log"))
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        // The member has its own copy; keep no descriptor per launch here.
        try? log?.close()
        lock.lock()
        members[index].process = process
        members[index].exited = exited
        lock.unlock()
    }

    private func createLog(_ path: String) -> String {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        return path
    }

    /// The etcd process under a member's `timeout` wrapper.
    private func serverPID(_ index: Int) -> Int32? {
        guard let wrapper = members[index].process, wrapper.isRunning else { return nil }
        let pid = wrapper.processIdentifier
        let children = try? String(
            contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)
        return children?.split(separator: " ").first.flatMap { Int32($0) }
    }

    /// Kills a member with SIGKILL and waits (up to 10 s) until it is gone;
    /// a member still there after that is recorded as a test issue.
    ///
    /// The signal goes to the server, to the wrapper's process group and to
    /// the wrapper: `timeout` puts itself in a group of its own before it
    /// starts the server, so a server started a moment ago, not yet listed
    /// as its child, dies with the group; a wrapper killed before it made
    /// the group has started no server.
    package func kill(_ index: Int) {
        guard let process = members[index].process else { return }
        if let server = serverPID(index) { sendSignal(SIGKILL, to: server) }
        if process.isRunning {
            sendSignal(SIGKILL, to: -process.processIdentifier)
            sendSignal(SIGKILL, to: process.processIdentifier)
        }
        if members[index].exited?.wait(timeout: .now() + 10) == .timedOut {
            Issue.record(
                "etcd member \(members[index].name) (pid \(process.processIdentifier)) was still running 10 s after SIGKILL"
            )
        }
        lock.lock()
        members[index].process = nil
        members[index].exited = nil
        lock.unlock()
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

    // MARK: Status

    /// A raw gateway call to member `index`: the HTTP status and the JSON
    /// reply. (Through the backend's socket transport: `URLSession` on Linux
    /// aborts the process when a server drops a connection mid-request.)
    package func post(
        _ index: Int, _ path: String, _ body: [String: Any], token: String? = nil,
        timeout: TimeInterval = 5
    ) throws -> (status: Int, json: [String: Any]) {
        let payload = try JSONSerialization.data(withJSONObject: body)
        let answer = SocketTransport().send(
            path, payload, to: members[index].clientURL, token: token,
            deadline: .now() + timeout)
        switch answer {
        case .reply(let status, let json):
            return (status, json)
        case .transport(let message, _):
            throw ClusterError(message: "\(path) on member \(index): \(message)")
        }
    }

    package struct Status {
        package let memberID: String
        package let leader: String
    }

    /// `POST /v3/maintenance/status` on one member, or nil when it does not answer.
    package func status(_ index: Int, timeout: TimeInterval = 1) -> Status? {
        guard let reply = try? post(index, "/v3/maintenance/status", [:], timeout: timeout),
            reply.status == 200, let header = reply.json["header"] as? [String: Any]
        else { return nil }
        return Status(
            memberID: header["member_id"] as? String ?? "",
            leader: reply.json["leader"] as? String ?? "")
    }

    /// Waits until every listed member answers and knows a leader.
    package func waitForLeader(deadline seconds: TimeInterval, members indices: [Int]? = nil) throws
    {
        let deadline = Date().addingTimeInterval(seconds)
        let indices = indices ?? Array(members.indices)
        if tls != nil {
            // The socket transport speaks plain HTTP only: ask etcdctl.
            var said = "nothing"
            while Date() < deadline {
                do {
                    let health = try etcdctl(["endpoint", "health"])
                    if health.status == 0 { return }
                    said = health.standardError
                } catch {
                    said = "\(error)"
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            throw ClusterError(
                message:
                    "etcd over https was not healthy after \(seconds) s; etcdctl said: \(said); logs: \(memberLogs())"
            )
        }
        while Date() < deadline {
            if indices.allSatisfy({ status($0).map { !$0.leader.isEmpty } ?? false }) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ClusterError(
            message:
                "etcd members \(indices) had no leader after \(seconds) s; logs: \(memberLogs())")
    }

    /// The end of each member's log, for failure messages.
    private func memberLogs() -> String {
        members.map { member in
            "\(member.name): " + (contents(directory.file("\(member.name).log")) ?? "").suffix(500)
        }.joined(separator: " | ")
    }

    package struct ClusterError: Error, CustomStringConvertible {
        package let message: String
        package init(message: String) { self.message = message }
        package var description: String { message }
    }

    /// The index of the current leader.
    package func leaderIndex() throws -> Int {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            for index in members.indices where members[index].process != nil {
                if let status = status(index), !status.leader.isEmpty,
                    status.leader == status.memberID
                {
                    return index
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ClusterError(message: "no member says it is the leader after 10 s")
    }

    // MARK: etcdctl

    /// Runs `etcdctl` against the cluster (or only `members`), killed after 15 s at most.
    @discardableResult
    package func etcdctl(
        _ arguments: [String], input: String? = nil, user: String? = nil, members: [Int]? = nil
    ) throws -> ProcessOutput {
        let chosen = members.map { $0.map { endpoints[$0].absoluteString } } ?? [endpointList]
        var all = [
            "--signal=KILL", "15", etcdctlPath!,
            "--endpoints=\(chosen.joined(separator: ","))",
            "--dial-timeout=3s", "--command-timeout=5s",
        ]
        if let user { all.append("--user=\(user)") }
        if let tls { all.append("--cacert=\(tls.authority)") }
        return try runBounded("/usr/bin/timeout", all + arguments, input: input)
    }
}

extension EtcdCluster {
    /// The root user and its password, for `etcdctl --user` once
    /// ``enableAuthentication(prefix:)`` has run.
    package static let rootUser = "root:rootpw"

    /// ``etcdctl(_:input:user:members:)`` that must succeed: any other exit
    /// status throws, with the command and everything it printed.
    @discardableResult
    package func etcdctlChecked(
        _ arguments: [String], input: String? = nil, user: String? = nil, members: [Int]? = nil
    ) throws -> ProcessOutput {
        let result = try etcdctl(arguments, input: input, user: user, members: members)
        guard result.status == 0 else {
            throw ClusterError(
                message:
                    "etcdctl \(arguments.joined(separator: " ")) exited with \(result.status); "
                    + "it printed \"\(result.standardOutput)\" and on standard error "
                    + "\"\(result.standardError)\"")
        }
        return result
    }

    /// Users and roles, then authentication on (E5): `root`, a `writer` that
    /// may read and write the keys under `prefix`, and a `reader` that may
    /// only read them. Each password is the user's name followed by `pw`.
    /// Every step must succeed: the first that does not throws with what
    /// `etcdctl` printed.
    package func enableAuthentication(prefix: String = "/prefs-test/") throws {
        let steps: [[String]] = [
            ["user", "add", Self.rootUser],
            ["user", "grant-role", "root", "root"],
            ["role", "add", "writer"],
            ["role", "grant-permission", "writer", "readwrite", prefix, "--prefix=true"],
            ["role", "add", "reader"],
            ["role", "grant-permission", "reader", "read", prefix, "--prefix=true"],
            ["user", "add", "writer:writerpw"],
            ["user", "grant-role", "writer", "writer"],
            ["user", "add", "reader:readerpw"],
            ["user", "grant-role", "reader", "reader"],
            ["auth", "enable"],
        ]
        for step in steps { try etcdctlChecked(step) }
    }
}

/// Runs a program to completion with optional standard input. Every caller
/// runs it under `timeout --signal=KILL N`, which bounds the wait: the
/// program's pipes close when `timeout` kills it.
package func runBounded(
    _ path: String, _ arguments: [String], input: String? = nil,
    environment: [String: String]? = nil
) throws -> ProcessOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let inPipe = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = inPipe
    try process.run()
    if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inPipe.fileHandleForWriting.close()
    let errors = LockedBox(Data())
    let readErrors = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        errors.value = err.fileHandleForReading.readDataToEndOfFile()
        readErrors.signal()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    readErrors.wait()
    process.waitUntilExit()
    return ProcessOutput(
        status: process.terminationStatus,
        standardOutput: String(decoding: outData, as: UTF8.self),
        standardError: String(decoding: errors.value, as: UTF8.self))
}

/// A key unique to one test.
package func uniqueKey(_ name: String = "store") -> String {
    "/prefs-test/\(name)-\(UUID().uuidString.prefix(8))"
}

/// One single-member cluster shared by the tests that need nothing but a
/// working etcd (each uses its own keys); stopped when the test process exits.
package enum SharedEtcd {
    private static let shared = LockedBox<EtcdCluster?>(nil)
    private static let starting = NSLock()

    package static func cluster() async throws -> EtcdCluster {
        try await offPool {
            starting.lock()
            defer { starting.unlock() }
            if let cluster = shared.value { return cluster }
            let cluster = try EtcdCluster(size: 1)
            shared.value = cluster
            atexit { SharedEtcd.stop() }
            return cluster
        }
    }

    private static func stop() {
        guard let cluster = shared.value else { return }
        cluster.stopAll()
        // Process exit runs no deinit: remove the data directory here.
        try? FileManager.default.removeItem(at: cluster.directory.url)
    }
}
