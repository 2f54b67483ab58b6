import PrefsCLI

// `https` etcd endpoints are handed to prefs-tls: only it links TLS.
PrefsTool(https: .handOffToPrefsTLS).runThisProcess()
