import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

extension PreferenceKeys {
    static let apiToken = PreferenceKey<String>(
        "api_token", default: "", help: "The upstream's token", secret: true)
}

/// Secrets (A3, the library's part): a declared secret's value never reaches
/// the history, the document says which keys are secret so that every
/// writer knows, and the file is kept readable by its owner only.
@Suite(.scaledTimeLimit(minutes: 5))
struct SecretTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.file("prefs.json")
    }

    @Test func theHistoryRecordsThatASecretChangedNeverItsValue() async throws {
        let store = try await PreferencesStore(fileURL: url, declaring: [PreferenceKeys.apiToken])
        for index in 0..<40 { try await store.set(.apiToken, "hunter2-\(index)") }
        try await store.set(.language, "fr")
        #expect(store[.apiToken] == "hunter2-39")
        let entries = try await store.history().entries
        #expect(entries.count == 41)
        for entry in entries.dropLast() {
            #expect(entry.changes["api_token"] == .secretChange, "#\(entry.sequence)")
            #expect(entry.description.hasSuffix("api_token <redacted> → <redacted>"))
        }
        #expect(entries.last?.changes["language"]?.new == "fr")
        // Neither the document's entries nor the archive hold a value.
        let document = try #require(contents(url))
        #expect(document.components(separatedBy: "hunter2").count == 2, "only values.api_token")
        let archive = try #require(contents(directory.file("prefs.json.history")))
        #expect(!archive.contains("hunter2"))
        #expect(try fileSnapshot(url).secretKeys == ["api_token"])
    }

    @Test func aWriterThatDoesNotKnowTheSecretStillKeepsItOutOfTheHistory() async throws {
        do {
            let service = try await PreferencesStore(
                fileURL: url, declaring: [PreferenceKeys.apiToken])
            try await service.set(.apiToken, "first")
        }
        // Another process that declares nothing changes the secret.
        let child = try await runChild(
            "prefs", ["--file", url.path, "set", "api_token", "second-value"])
        #expect(child.status == 0, "\(child.standardError)")
        let reader = try await PreferencesStore(fileURL: url, liveReads: false)
        let last = try #require(try await reader.history().entries.last)
        #expect(last.changes["api_token"] == .secretChange)
        #expect(!(contents(url) ?? "").contains("\"second-value\"}"))
    }

    @Test func aFileReadableByOthersIsNarrowedByTheNextWriteWithAProblem() async throws {
        try write(#"{"format": 1, "values": {"language": "en"}}"#, to: url)
        #expect(chmod(url.path, 0o644) == 0)
        let store = try await PreferencesStore(fileURL: url, declaring: [PreferenceKeys.apiToken])
        try await store.set(.apiToken, "s3cret")
        #expect(try permissions(url) == 0o600)
        #expect(store.problems.contains { $0.message.contains("readable by others") })
        // Later writes keep it so.
        try await store.set(.language, "fr")
        #expect(try permissions(url) == 0o600)
    }

    @Test func aSecretChangeCannotBeUndoneFromTheHistory() async throws {
        let store = try await PreferencesStore(fileURL: url, declaring: [PreferenceKeys.apiToken])
        try await store.set(.apiToken, "one")
        try await store.set(.apiToken, "two")
        let before = try Data(contentsOf: url)
        // Refused for the secret itself, even when nothing changed since
        // and even when forced: the old value is not kept to put back.
        let refusal = PreferencesError.conflict(
            keys: ["api_token"],
            reason:
                "change #2 cannot be reverted: the history does not keep the values of these secret keys"
        )
        await #expect(throws: refusal) { try await store.revert(2) }
        await #expect(throws: refusal) { try await store.revert(2, force: true) }
        await #expect(
            throws: PreferencesError.conflict(
                keys: ["api_token"],
                reason:
                    "the state after #1 cannot be restored: the history does not keep the values of these secret keys"
            )
        ) { try await store.restore(to: 1) }
        #expect(store[.apiToken] == "two")
        #expect(try Data(contentsOf: url) == before, "a refused undo wrote")
    }

    @Test func manifestsCarryTheSecretFlag() throws {
        let manifest = try PreferencesManifest(keys: [
            PreferenceKeys.apiToken, PreferenceKeys.language,
        ])
        #expect(manifest["api_token"]?.secret == true)
        #expect(manifest["language"]?.secret == false)
        let reread = try PreferencesManifest(jsonText: manifest.jsonText)
        #expect(reread == manifest)
        #expect(manifest.jsonText.contains(#""secret" : true"#))
        #expect(throws: PreferencesError.self) {
            try PreferencesManifest(
                jsonText: #"{"keys": {"k": {"type": "string", "secret": "yes"}}}"#)
        }
    }
}
