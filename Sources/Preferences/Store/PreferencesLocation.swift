#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a named suite's file lives (7.1, <doc:CommandLineTool>), shared by
/// the library and `prefs`.
///
/// `$PREFS_HOME/NAME.json` when `PREFS_HOME` is set, else
/// `$XDG_CONFIG_HOME/prefs/NAME.json`, else `~/.config/prefs/NAME.json`
/// (on macOS `~/Library/Application Support/prefs/NAME.json`).
///
/// ```swift
/// let url = try PreferencesLocation.fileURL(suite: "com.example.app")
/// ```
public enum PreferencesLocation {
    /// The default suite's name.
    public static let defaultSuite = "default"

    /// The file for `suite`, following the environment rules above.
    ///
    /// - Throws: ``PreferencesError/invalidSuiteName(_:)`` unless the name
    ///   is `[A-Za-z0-9._-]+` and does not start with a dot (so it can never
    ///   climb out of the directory).
    public static func fileURL(
        suite: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        try validate(suite: suite)
        return directory(environment: environment).appendingPathComponent(suite + ".json")
    }

    /// The directory that holds suites' files.
    public static func directory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        if let home = environment["PREFS_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config, isDirectory: true).appendingPathComponent("prefs")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Platform.homeDirectory()
        #if canImport(Darwin)
            return URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent("Library/Application Support/prefs")
        #else
            return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
                ".config/prefs")
        #endif
    }

    /// Throws unless `suite` is a valid suite name.
    public static func validate(suite: String) throws {
        let allowed = suite.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard allowed, !suite.isEmpty, !suite.hasPrefix(".") else {
            throw PreferencesError.invalidSuiteName(suite)
        }
    }
}
