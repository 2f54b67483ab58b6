import Foundation
import PreferencesEtcdTLS
import PrefsCLI

// `prefs` with TLS: `prefs` runs it, in its place, for `https` etcd endpoints.
let tool = PrefsTool(https: .tls(.systemTrustStore))
exit(await tool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
