// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Preferences",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Preferences", targets: ["Preferences"]),
        // The etcd backend, separate so a service on files links no networking.
        .library(name: "PreferencesEtcd", targets: ["PreferencesEtcd"]),
        // TLS for etcd's https endpoints, separate so that only a service
        // using https links FoundationNetworking (libcurl on Linux).
        .library(name: "PreferencesEtcdTLS", targets: ["PreferencesEtcdTLS"]),
        // The storage contract any backend's tests run in one call.
        .library(name: "PreferencesTesting", targets: ["PreferencesTesting"]),
        .executable(name: "prefs", targets: ["prefs"]),
        // `prefs` with TLS, installed beside it: `prefs` hands it every
        // invocation on an https etcd endpoint.
        .executable(name: "prefs-tls", targets: ["prefs-tls"]),
        .executable(name: "prefs-bench", targets: ["prefs-bench"]),
        .executable(name: "prefs-crash-explorer", targets: ["prefs-crash-explorer"]),
    ],
    targets: [
        .target(name: "Preferences"),
        .target(name: "PreferencesEtcd", dependencies: ["Preferences"]),
        .target(name: "PreferencesEtcdTLS", dependencies: ["Preferences", "PreferencesEtcd"]),
        .target(name: "PreferencesTesting", dependencies: ["Preferences"]),
        // The one way the tool, the crash explorer and the benchmark start
        // a program: `posix_spawn`, only standard streams passed on.
        .target(name: "ProcessSpawning"),
        // Free loopback ports and the command line of an etcd member, for
        // the clusters the tests and the benchmark start.
        .target(name: "LocalEtcd"),
        .target(
            name: "PrefsCLI", dependencies: ["Preferences", "PreferencesEtcd", "ProcessSpawning"]),
        .executableTarget(name: "prefs", dependencies: ["PrefsCLI"]),
        .executableTarget(name: "prefs-tls", dependencies: ["PrefsCLI", "PreferencesEtcdTLS"]),
        .executableTarget(
            name: "prefs-bench",
            dependencies: ["Preferences", "PreferencesEtcd", "LocalEtcd", "ProcessSpawning"]),
        // A small settings-driven service: migrates at start-up, reads typed
        // settings, and reacts to `prefs set` from another shell.
        .executableTarget(name: "prefs-example", dependencies: ["Preferences", "PreferencesEtcd"]),
        // A small child program the tests and reliability harnesses start as a
        // real, separate process (crash, multi-process and fault scenarios).
        // No TLS: the tests read its maps as a service's that links none.
        .executableTarget(name: "prefs-harness", dependencies: ["Preferences", "PreferencesEtcd"]),
        // Crash-state exploration: records a workload's file-system calls
        // through the Platform shim, builds every state a crash may leave
        // under a persistence model, and opens each in a fresh process.
        // The model, the workloads and the checker live in a library, so
        // that the explorer's own tests can feed it records built by hand.
        // It links the command-line tool's library to run `prefs`
        // commands in the recording process.
        .target(name: "CrashStates", dependencies: ["Preferences", "PrefsCLI", "ProcessSpawning"]),
        .executableTarget(
            name: "prefs-crash-explorer", dependencies: ["CrashStates", "Preferences"]),
        // What the test targets share: temporary directories, child
        // processes with deadlines, test etcd clusters, common keys.
        .target(
            name: "PreferencesTestSupport",
            dependencies: [
                "LocalEtcd", "Preferences", "PreferencesEtcd", "PreferencesEtcdTLS",
                "PreferencesTesting", "ProcessSpawning",
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "PreferencesTests",
            dependencies: [
                "Preferences", "PreferencesTesting", "PreferencesTestSupport", "prefs",
                "prefs-harness", "prefs-example",
            ]
        ),
        .testTarget(
            name: "PreferencesEtcdTests",
            dependencies: [
                "LocalEtcd", "Preferences", "PreferencesEtcd", "PreferencesEtcdTLS",
                "PreferencesTesting", "PreferencesTestSupport", "prefs-harness",
            ]
        ),
        .testTarget(
            name: "CrashStatesTests",
            dependencies: ["CrashStates", "Preferences", "PreferencesTestSupport"]
        ),
        .testTarget(
            name: "PrefsCLITests",
            dependencies: [
                "LocalEtcd", "Preferences", "PrefsCLI", "PreferencesTesting",
                "PreferencesTestSupport", "ProcessSpawning", "prefs", "prefs-tls",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
