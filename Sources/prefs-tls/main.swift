import Foundation
import PreferencesEtcdTLS
import PrefsCLI

// `prefs` with TLS: `prefs` runs it, in its place, for `https` etcd endpoints.
//
// It ends with `_exit`, not `exit`: `exit` runs OpenSSL's clean-up handlers,
// while URLSession may still be freeing a released session's TLS state on
// its own thread, and the two together can crash the process after the
// command has done its work (a SEGV in `pthread_rwlock_unlock` under
// `curl_multi_cleanup`), so that a change that was made would be reported
// as failed. Nothing the tool needs runs at exit: its output is flushed here.
let tool = PrefsTool(https: .tls(.systemTrustStore))
let status = await tool.run(Array(CommandLine.arguments.dropFirst()))
fflush(nil)
_exit(status.rawValue)
