import Foundation
import Preferences
import PreferencesEtcd
import PreferencesTesting

/// Members' status through the gateway: raw calls, the leader, waits for one.
extension EtcdCluster {
    /// A raw gateway call to member `index`: the HTTP status and the JSON
    /// reply. (Through the backend's socket transport: `URLSession` on Linux
    /// aborts the process when a server drops a connection mid-request.)
    package func post(
        _ index: Int, _ path: String, _ body: PreferenceValue, token: String? = nil,
        timeout: TimeInterval = 5
    ) throws -> (status: Int, json: PreferenceValue) {
        let answer = SocketTransport().send(
            path, Data(body.jsonText.utf8), to: members[index].clientURL, token: token,
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
            reply.status == 200, let header = reply.json["header"]
        else { return nil }
        return Status(
            memberID: header["member_id"]?.stringValue ?? "",
            leader: reply.json["leader"]?.stringValue ?? "")
    }

    /// Waits until every listed member answers and knows a leader.
    package func waitForLeader(deadline seconds: TimeInterval, members indices: [Int]? = nil) throws
    {
        let seconds = TestTime.scaled(seconds: seconds)
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
        let seconds = TestTime.scaled(seconds: 10)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            for index in members.indices where members[index].child != nil {
                if let status = status(index), !status.leader.isEmpty,
                    status.leader == status.memberID
                {
                    return index
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ClusterError(message: "no member says it is the leader after \(seconds) s")
    }
}
