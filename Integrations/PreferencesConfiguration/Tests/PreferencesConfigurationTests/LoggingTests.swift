import Configuration
import Foundation
import InMemoryLogging
import Logging
import Preferences
import Testing

@testable import PreferencesConfiguration

extension PreferenceKeys {
    fileprivate static let port = PreferenceKey<Int>("http.port", default: 80)
    fileprivate static let pin = PreferenceKey<Int>("api.pin", default: 0)
}

/// What the provider logs: the store's problems as they appear and clear,
/// mismatches its watches meet, and other programs' changes, never a
/// secret's value.
@Suite struct LoggingTests {
    /// A logger that keeps what it logs, at `level` and above.
    static func logger(_ level: Logger.Level) -> (Logger, InMemoryLogHandler) {
        var handler = InMemoryLogHandler()
        handler.logLevel = level
        return (Logger(label: "test", factory: { _ in handler }), handler)
    }

    /// Every entry as one line: level, message and metadata.
    static func lines(_ handler: InMemoryLogHandler) -> [String] {
        handler.entries.map { entry in
            let metadata = entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "\(entry.level) \(entry.message) \(metadata.joined(separator: " "))"
        }
    }

    @Test func eachProblemIsLoggedOnceWhenItAppearsAndOnceWhenItClears() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let (logger, handler) = Self.logger(.info)
        let provider = PreferencesProvider(store: store, logger: logger)
        try await store.edit { $0[raw: "http.port"] = "eighty" }
        #expect(store[.port] == 80, "a read that meets the mismatch")
        #expect(store[.port] == 80, "and meets it again")
        try await eventually("the mismatch to be logged") {
            handler.entries.contains { $0.level == .warning }
        }
        // A second problem while the first stays: only the new one is logged.
        try await store.edit { $0[raw: "api.pin"] = "four" }
        #expect(store[.pin] == 0, "a read that meets the second mismatch")
        try await eventually("the second mismatch to be logged") {
            handler.entries.contains { $0.metadata["preferences.key"] == "api.pin" }
        }
        try await store.edit {
            $0[raw: "http.port"] = 8080
            $0[raw: "api.pin"] = 1234
        }
        try await eventually("both mismatches to be logged as cleared") {
            handler.entries.filter { $0.level == .info }.count == 2
        }
        let entries = handler.entries
        #expect(entries.count == 4, "\(Self.lines(handler))")
        #expect(
            entries.filter { $0.metadata["preferences.problem"] == "appeared" }.map {
                $0.metadata["preferences.key"]
            } == ["http.port", "api.pin"], "\(Self.lines(handler))")
        #expect(entries.first?.metadata["preferences.key"] == "http.port")
        #expect(entries.first?.metadata["preferences.problem"] == "appeared")
        #expect(entries.first?.metadata["preferences.location"] == .string(store.location))
        let message = entries.first.map { "\($0.message)" } ?? ""
        #expect(message.contains("http.port"))
        #expect(entries.last?.metadata["preferences.problem"] == "cleared")
        _ = provider
    }

    @Test func aProblemWithASecretNeverLogsItsValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        let (logger, handler) = Self.logger(.trace)
        let provider = PreferencesProvider(store: store, secretKeys: ["api.pin"], logger: logger)
        try await store.edit { $0[raw: "api.pin"] = "hunter2-pin" }
        #expect(store[.pin] == 0, "a read that meets the mismatch")
        try await eventually("the secret's problem to be logged") {
            handler.entries.contains { $0.metadata["preferences.key"] == "api.pin" }
        }
        let lines = Self.lines(handler)
        #expect(!lines.joined().contains("hunter2"), "\(lines)")
        _ = provider
    }

    @Test func aTypeMismatchMetByAWatchIsLogged() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("service.json"))
        try await store.edit { $0[raw: "http.port"] = "eighty" }
        let (logger, handler) = Self.logger(.info)
        let provider = PreferencesProvider(store: store, logger: logger)
        let first = try await withDeadline(.seconds(30)) { progress in
            progress.waiting(for: "the watch's first update")
            return try await provider.watchValue(forKey: "http.port", type: .int) { updates in
                var iterator = updates.makeAsyncIterator()
                return try await iterator.next()
            }
        }
        #expect(throws: PreferencesProviderError.self) { try first?.get() }
        let logged = handler.entries.first { $0.metadata["preferences.type"] == "int" }
        #expect(logged?.level == .warning)
        #expect(logged?.metadata["preferences.key"] == "http.port")
        let message = logged.map { "\($0.message)" }
        #expect(message == "Config value for key 'http.port' failed to convert to type int.")
    }

    @Test func anotherProgramsChangeIsLoggedAtDebugNamingWhoWithoutASecret() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("service.json")
        let store = try await PreferencesStore(fileURL: file)
        let (logger, handler) = Self.logger(.debug)
        // `prefs` is not told that api.token is secret: the provider is.
        let provider = PreferencesProvider(store: store, secretKeys: ["api.token"], logger: logger)
        try await store.edit { $0[raw: "local.key"] = 1 }
        try await prefs("--file", file.path, "set", "http.port", "9090")
        try await prefs("--file", file.path, "set", "api.token", "hunter2-token")
        try await eventually("both of prefs's changes to be logged") {
            handler.entries.filter { $0.metadata["preferences.program"] == "prefs" }.count == 2
        }
        let changes = handler.entries.filter { $0.metadata["preferences.program"] == "prefs" }
        #expect(changes.allSatisfy { $0.level == .debug })
        #expect("\(changes[0].message)".contains("http.port 8080") == false)
        #expect("\(changes[0].message)".contains("http.port unset → 9090"), "\(changes[0].message)")
        #expect(changes[0].metadata["preferences.keys"] == ["http.port"])
        #expect(changes[0].metadata["preferences.host"] != nil)
        #expect(changes[0].metadata["preferences.user"] != nil)
        #expect("\(changes[1].message)".contains("api.token <redacted>"))
        let lines = Self.lines(handler)
        #expect(!lines.joined().contains("hunter2"), "\(lines)")
        // This process's own change is not another program's.
        #expect(!lines.joined().contains("local.key"), "\(lines)")
        _ = provider
    }
}
