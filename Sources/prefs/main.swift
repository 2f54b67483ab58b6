import PrefsCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// `https` etcd endpoints are handed to prefs-tls: only it links TLS.
let tool = PrefsTool(https: .handOffToPrefsTLS)
exit(await tool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
