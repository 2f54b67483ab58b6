#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a named suite's file lives (7.1, <doc:CommandLineTool>,
/// <doc:ServiceSettings>), shared by the library and `prefs`.
///
/// In the user scope (the default): `$PREFS_HOME/NAME.json` when
/// `PREFS_HOME` is set, else `$XDG_CONFIG_HOME/prefs/NAME.json`, else
/// `~/.config/prefs/NAME.json` (on macOS
/// `~/Library/Application Support/prefs/NAME.json`).
///
/// In the system scope: `$PREFS_SYSTEM_HOME/NAME/NAME.json` when
/// `PREFS_SYSTEM_HOME` is set, else `/var/lib/prefs/NAME/NAME.json` (on
/// macOS `/Library/Preferences/prefs/NAME/NAME.json`): one directory per
/// suite, which belongs to the service's user.
///
/// ```swift
/// let url = try PreferencesLocation.fileURL(suite: "com.example.app")
/// let shared = try PreferencesLocation.fileURL(suite: "com.example.api", scope: .system)
/// ```
public enum PreferencesLocation {
    /// The default suite's name.
    public static let defaultSuite = "default"

    /// The file for `suite` in `scope`, following the environment rules above.
    ///
    /// - Throws: ``PreferencesError/invalidSuiteName(_:)`` unless the name
    ///   is `[A-Za-z0-9._-]+` and does not start with a dot (so it can never
    ///   climb out of the directory).
    public static func fileURL(
        suite: String, scope: PreferencesScope = .user,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        try validate(suite: suite)
        let base = directory(scope: scope, environment: environment)
        switch scope {
        case .user:
            return base.appendingPathComponent(suite + ".json")
        case .system:
            return base.appendingPathComponent(suite, isDirectory: true)
                .appendingPathComponent(suite + ".json")
        }
    }

    /// The directory that holds suites' files (user scope), or the
    /// suites' directories (system scope: `/var/lib/prefs`, or
    /// `$PREFS_SYSTEM_HOME`).
    public static func directory(
        scope: PreferencesScope = .user,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        if scope == .system {
            if let home = environment["PREFS_SYSTEM_HOME"], !home.isEmpty {
                return URL(fileURLWithPath: home, isDirectory: true)
            }
            return URL(fileURLWithPath: Platform.systemPreferencesDirectory, isDirectory: true)
        }
        if let home = environment["PREFS_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config, isDirectory: true).appendingPathComponent("prefs")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Platform.homeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
            Platform.userPreferencesSubpath)
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
