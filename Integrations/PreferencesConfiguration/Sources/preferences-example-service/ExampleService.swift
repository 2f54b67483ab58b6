// preferences-example-service: a service that reads its settings through
// swift-configuration from a Preferences store, follows one of them while
// it runs, and stops cleanly on SIGTERM. The guide "Using Preferences with
// swift-configuration" quotes the part between the markers below, and a
// test holds the two to the same text.
//
//   swift run preferences-example-service
//   sudo prefs --system --suite com.example.service set greeting Bonjour    (from another shell)
//   GREETING=Hi swift run preferences-example-service    (a default from the environment)
//
// Its store is in the system scope: /var/lib/prefs/com.example.service/,
// a directory that belongs to the service's user (systemd's
// StateDirectory=prefs/com.example.service), or under $PREFS_SYSTEM_HOME.

// guide: begin
import Configuration
import Logging
import Preferences
import PreferencesConfiguration
import PreferencesServiceLifecycle
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The service's work: reads its settings through swift-configuration and
/// follows its greeting until the service group shuts down.
struct GreetingWorker: Service {
    let config: ConfigReader
    let logger: Logger

    func run() async throws {
        let port = config.int(forKey: "http.port", default: 8080)
        logger.info("started", metadata: ["http.port": "\(port)"])
        // The current greeting first, then each change, from any process.
        try await config.watchString(forKey: "greeting", default: "Hello") { updates in
            for await greeting in updates.cancelOnGracefulShutdown() {
                logger.info("greeting in use", metadata: ["greeting": "\(greeting)"])
            }
        }
        logger.info("stopped")
    }
}

@main
struct ExampleService {
    static func main() async {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let logger = Logger(label: "preferences-example-service")
        let store: PreferencesStore
        do {
            store = try await PreferencesStore(suite: "com.example.service", scope: .system)
        } catch {
            // A corrupt or unreadable store: one line naming it, and a status.
            logger.critical("cannot open the settings", metadata: ["error": "\(error)"])
            exit(EXIT_FAILURE)
        }
        // From here on `prefs replicas` lists this process.
        await store.registeredAsReplica()
        // What an operator sets with `prefs` wins over the environment
        // (GREETING, HTTP_PORT), which gives the defaults.
        let config = ConfigReader(providers: [
            PreferencesProvider(store: store, logger: logger),
            EnvironmentVariablesProvider(),
        ])
        // Shut down in reverse: the worker stops first, then the store closes.
        let group = ServiceGroup(
            services: [
                PreferencesStoreService(store: store, logger: logger),
                GreetingWorker(config: config, logger: logger),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        do {
            try await group.run()
        } catch {
            logger.critical("stopped on an error", metadata: ["error": "\(error)"])
            exit(EXIT_FAILURE)
        }
    }
}
// guide: end
