// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "PreferencesConfiguration",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PreferencesConfiguration", targets: ["PreferencesConfiguration"]),
        // A swift-service-lifecycle Service that closes a store on graceful
        // shutdown: a library of its own, so that reading through
        // ConfigReader does not link swift-service-lifecycle.
        .library(name: "PreferencesServiceLifecycle", targets: ["PreferencesServiceLifecycle"]),
    ],
    dependencies: [
        .package(name: "Preferences", path: "../.."),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.9.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.11.0"),
    ],
    targets: [
        .target(
            name: "PreferencesConfiguration",
            dependencies: [
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "PreferencesServiceLifecycle",
            dependencies: [
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The service the guide quotes: a ServiceGroup with the store's
        // service and a worker reading ConfigReader, stopped by SIGTERM.
        .executableTarget(
            name: "preferences-example-service",
            dependencies: [
                "PreferencesConfiguration",
                "PreferencesServiceLifecycle",
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The graceful-end tests' child: a ServiceGroup holding a store's
        // service, on a file or on etcd.
        .executableTarget(
            name: "preferences-service-harness",
            dependencies: [
                "PreferencesServiceLifecycle",
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "PreferencesEtcd", package: "Preferences"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // P13: reads through the provider beside InMemoryProvider, and a
        // `prefs set` in another process to the provider's watch.
        .executableTarget(
            name: "preferences-configuration-bench",
            dependencies: [
                "PreferencesConfiguration",
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "prefs", package: "Preferences"),
            ]
        ),
        .testTarget(
            name: "PreferencesConfigurationTests",
            dependencies: [
                "PreferencesConfiguration",
                "PreferencesServiceLifecycle",
                "preferences-example-service",
                "preferences-service-harness",
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "PreferencesEtcd", package: "Preferences"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "prefs", package: "Preferences"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
