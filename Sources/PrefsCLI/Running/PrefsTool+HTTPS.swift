import Preferences
import PreferencesEtcd

extension PrefsTool {
    /// How the tool reaches `https://` etcd endpoints.
    ///
    /// TLS on Linux is `FoundationNetworking` and libcurl, about thirty more
    /// shared libraries loaded at every start, which a tool that mostly
    /// reads a file should not pay for. So `prefs` links no TLS and hands
    /// every invocation whose etcd endpoints (`--etcd`, or
    /// `$PREFS_ETCD_ENDPOINTS` without `--file`) include an `https` one to
    /// `prefs-tls`, installed beside it: the same tool with TLS, run with
    /// the same arguments and environment in place of `prefs`. The command
    /// line does not change, completions included; `--help` and
    /// `--version` need no store and are answered by `prefs` itself.
    public enum HTTPS: Sendable {
        /// In this process, over this TLS (`prefs-tls`).
        case tls(EtcdConfiguration.TLS)
        /// By `prefs-tls` beside this process's executable, which replaces
        /// this process (`prefs`). When it is missing, the command fails
        /// with exit status 5 and a line naming the path looked for.
        case handOffToPrefsTLS
        /// Not at all: an `https` endpoint is a usage error naming it (the
        /// default, for a tool run inside another program).
        case refused

        /// The program `prefs` hands `https` invocations to.
        static let tlsProgram = "prefs-tls"

        /// The TLS for ``StoreTarget``'s etcd configuration.
        var tls: EtcdConfiguration.TLS? {
            if case .tls(let tls) = self { tls } else { nil }
        }

        /// With ``handOffToPrefsTLS``, runs `arguments` in `prefs-tls` in
        /// place of this process when `invocation` names an `https`
        /// endpoint. Returns when this process runs the command itself.
        ///
        /// - Throws: a ``CommandFailure`` (exit status 5) naming the path
        ///   of `prefs-tls` when it could not be started.
        func handOff(
            _ arguments: [String], _ invocation: Invocation, environment: [String: String]
        ) throws(CommandFailure) {
            // A list that does not parse stays here, for the usage error
            // naming the endpoint at fault.
            guard case .handOffToPrefsTLS = self,
                let list = StoreTarget.etcdEndpoints(invocation.global, environment),
                let endpoints = try? EtcdConfiguration.endpoints(parsing: list),
                let endpoint = endpoints.first(where: EtcdConfiguration.isHTTPS)
            else { return }
            let shown = endpoint.absoluteString
            guard let path = SiblingExecutable.path(Self.tlsProgram) else {
                throw CommandFailure(
                    .ioError,
                    "\(shown) needs \(Self.tlsProgram), and the directory of prefs cannot be found")
            }
            let reason = SiblingExecutable.replaceProcess(with: path, arguments: arguments)
            throw CommandFailure(
                .ioError,
                "\(shown) needs \(Self.tlsProgram), installed beside prefs: \(path): \(reason)")
        }
    }
}
