import Foundation
import PreferencesEtcdTLS
import PrefsCLI

// `prefs` with TLS: `prefs` runs it, in its place, for `https` etcd endpoints.
// An `async` main, not `runThisProcess()`: an https command always waits,
// and `exit` from the thread it resumed on would run OpenSSL's clean-up
// while URLSession's own thread may still be freeing its TLS state.
let tool = PrefsTool(https: .tls(.systemTrustStore))
exit(await tool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
