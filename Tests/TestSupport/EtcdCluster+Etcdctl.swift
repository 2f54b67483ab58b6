import Foundation
import Preferences
import PreferencesTesting
import Testing

/// `etcdctl` against the cluster, and the users and roles set up with it.
extension EtcdCluster {
    /// Runs `etcdctl` against the cluster (or only `members`), killed after
    /// 15 s (scaled by ``TestTime/scale``) at most.
    @discardableResult
    package func etcdctl(
        _ arguments: [String], input: String? = nil, user: String? = nil, members: [Int]? = nil
    ) throws -> ProcessOutput {
        let chosen = members.map { $0.map { endpoints[$0].absoluteString } } ?? [endpointList]
        var all = [
            "--signal=KILL", "\(Int(TestTime.scaled(seconds: 15)))", etcdctlPath!,
            "--endpoints=\(chosen.joined(separator: ","))",
            "--dial-timeout=\(Int(TestTime.scaled(seconds: 3)))s",
            "--command-timeout=\(Int(TestTime.scaled(seconds: 5)))s",
        ]
        if let user { all.append("--user=\(user)") }
        if let tls { all.append("--cacert=\(tls.authority)") }
        return try ChildCommand(
            program: "/usr/bin/timeout", all + arguments, input: input.map { .text($0) } ?? .none
        ).runBlocking()
    }

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
