// preferences-service-harness: the child process of the graceful-end
// tests. It opens one store and waits until the process is registered as
// a replica, then runs a ServiceGroup holding the store's service and one
// that prints "ready" (the group traps SIGTERM before it starts any
// service, so a SIGTERM sent after "ready" shuts it down gracefully). It
// prints "closed" once the group has ended, and exits 0. Its logs go to
// standard error.
//
//   preferences-service-harness file PATH
//   preferences-service-harness etcd ENDPOINTS KEY
//
// On etcd its registration's lease lasts 10 minutes, so a registration
// gone within seconds of SIGTERM was removed by the store's close(), not
// found gone when its lease ran out.
import Logging
import Preferences
import PreferencesEtcd
import PreferencesServiceLifecycle
import ServiceLifecycle

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints `line` on standard output at once, even into a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// Says "ready" as the group starts it, then waits for the group's end.
struct Announcer: Service {
    func run() async throws {
        say("ready")
        try? await gracefulShutdown()
    }
}

/// Prints `line` on standard error and exits with status 2.
func fail(_ line: String) -> Never {
    let bytes = Array("preferences-service-harness: \(line)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

LoggingSystem.bootstrap(StreamLogHandler.standardError)
let arguments = Array(CommandLine.arguments.dropFirst())
let store: PreferencesStore
do {
    switch (arguments.first, arguments.count) {
    case ("file", 2):
        store = try await PreferencesStore(fileURL: URL(fileURLWithPath: arguments[1]))
    case ("etcd", 3):
        var configuration = try EtcdConfiguration(endpoints: arguments[1])
        configuration.replicaTTL = 600
        store = try await PreferencesStore(etcd: configuration, key: arguments[2])
    default:
        fail("usage: preferences-service-harness file PATH | etcd ENDPOINTS KEY")
    }
} catch {
    fail("\(error)")
}
await store.registeredAsReplica()
let logger = Logger(label: "preferences-service-harness")
let group = ServiceGroup(
    services: [PreferencesStoreService(store: store, logger: logger), Announcer()],
    gracefulShutdownSignals: [.sigterm], logger: logger)
do {
    try await group.run()
} catch {
    fail("the service group ended with \(error)")
}
say("closed")
