import Configuration
import Foundation
import Preferences
import PreferencesConfiguration
import Testing

/// The provider in front of another in a `ConfigReader`: a key it does not
/// store, and a stored `null`, are absent, so the next provider answers; a
/// stored value of the wrong type is an error, which stops the reader there
/// (the Preferences article "Using Preferences with swift-configuration").
@Suite struct LayeringTests {
    /// What the provider behind holds, for every key read here.
    static let behind = InMemoryProvider(values: [
        "db.host": "db-0",
        "log.level": "info",
        "http.workers": 3,
        "http.port": 7,
    ])

    /// A file store, written by another process: a string, a `null`, and
    /// a string where an int is read.
    static func layeredReader(in directory: TemporaryDirectory) async throws
        -> (PreferencesProvider, ConfigReader)
    {
        let file = directory.file("service.json")
        try await withDeadline(.seconds(60)) { progress in
            for (key, value, type) in [
                ("db.host", "db-1", "string"), ("http.workers", "null", "json"),
                ("http.port", "eighty", "string"),
            ] {
                progress.waiting(for: "`prefs set \(key) \(value) --type \(type)` to end")
                try await prefs("--file", file.path, "set", key, value, "--type", type)
            }
        }
        let store = try await PreferencesStore(fileURL: file)
        #expect(store.storedValue(forKey: "http.workers") == .null)
        let provider = PreferencesProvider(store: store)
        return (provider, ConfigReader(providers: [provider, behind]))
    }

    @Test func readsFallThroughOnAbsenceAndNullButNotOnAnError() async throws {
        let directory = try TemporaryDirectory()
        let (provider, config) = try await Self.layeredReader(in: directory)
        // Stored: this provider answers.
        #expect(config.string(forKey: "db.host") == "db-1")
        // Not stored, and stored as null: no value and no error here, so
        // the provider behind answers.
        #expect(try provider.value(forKey: "log.level", type: .string).value == nil)
        #expect(try provider.value(forKey: "http.workers", type: .int).value == nil)
        #expect(config.string(forKey: "log.level") == "info")
        #expect(config.int(forKey: "http.workers") == 3)
        #expect(try config.requiredInt(forKey: "http.workers") == 3)
        // The wrong type: the error, never the value behind.
        let error = #expect(throws: PreferencesProviderError.self) {
            try config.requiredInt(forKey: "http.port")
        }
        #expect(error?.storedType == "a string")
        #expect(config.int(forKey: "http.port") == nil)
        #expect(config.int(forKey: "http.port", default: 1) == 1)
    }

    @Test func fetchesFallThroughOnAbsenceAndNullButNotOnAnError() async throws {
        let directory = try TemporaryDirectory()
        let (_, config) = try await Self.layeredReader(in: directory)
        #expect(try await config.fetchString(forKey: "db.host") == "db-1")
        #expect(try await config.fetchString(forKey: "log.level") == "info")
        #expect(try await config.fetchInt(forKey: "http.workers") == 3)
        await #expect(throws: PreferencesProviderError.self) {
            try await config.fetchRequiredInt(forKey: "http.port")
        }
        // A fetch throws the error even with a default.
        await #expect(throws: PreferencesProviderError.self) {
            try await config.fetchInt(forKey: "http.port", default: 1)
        }
    }

    @Test func watchesFallThroughOnAbsenceAndNullButNotOnAnError() async throws {
        let directory = try TemporaryDirectory()
        let (_, config) = try await Self.layeredReader(in: directory)
        let firsts = try await withDeadline(.seconds(30)) { progress in
            var firsts: [String] = []
            progress.waiting(for: "the first value of a watch of log.level")
            try await config.watchString(forKey: "log.level", default: "none") { updates in
                for await level in updates {
                    firsts.append(level)
                    return
                }
            }
            progress.waiting(for: "the first value of a watch of http.workers")
            try await config.watchInt(forKey: "http.workers", default: 1) { updates in
                for await workers in updates {
                    firsts.append("\(workers)")
                    return
                }
            }
            progress.waiting(for: "the first value of a watch of http.port")
            try await config.watchInt(forKey: "http.port", default: 1) { updates in
                for await port in updates {
                    firsts.append("\(port)")
                    return
                }
            }
            return firsts
        }
        #expect(firsts == ["info", "3", "1"])
    }
}
