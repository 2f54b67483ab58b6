import PreferencesEtcdTLS
import PrefsCLI

// `prefs` with TLS: `prefs` runs it, in its place, for `https` etcd endpoints.
PrefsTool(https: .tls(.systemTrustStore)).runThisProcess()
