// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "PreferencesConfiguration",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PreferencesConfiguration", targets: ["PreferencesConfiguration"])
    ],
    dependencies: [
        .package(name: "Preferences", path: "../.."),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.9.0"),
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
                .product(name: "Preferences", package: "Preferences"),
                .product(name: "PreferencesEtcd", package: "Preferences"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "prefs", package: "Preferences"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
