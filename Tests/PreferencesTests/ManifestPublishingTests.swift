import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

private struct Display: PreferencesRecord {
    var theme = "light"
    var zoom = 14.0
    var columns = 3
}

/// A store opened with its declared keys publishes their manifest beside
/// its file, where `prefs` finds it (7.6, <doc:CommandLineTool>).
@Suite(.scaledTimeLimit(minutes: 10)) struct ManifestPublishingTests {
    let workspace: CLIWorkspace
    var published: URL { workspace.file("prefs.keys.json") }

    init() throws {
        workspace = try CLIWorkspace()
    }

    @Test func theNameReplacesJSONOrAddsToIt() {
        #expect(
            PreferencesManifest.publishedName(forStoreNamed: "default.json") == "default.keys.json")
        #expect(
            PreferencesManifest.publishedName(forStoreNamed: "settings") == "settings.keys.json")
    }

    @Test func prefsGetPrintsTheServicesDefaultWithNoFlags() async throws {
        let store = try await PreferencesStore(
            fileURL: workspace.store, declaring: [PreferenceKeys.language, PreferenceKeys.mapZoom])
        #expect(store.problems.isEmpty)
        let manifest = try PreferencesManifest.load(from: published)
        #expect(manifest["language"]?.defaultValue == "en")
        let output = try await workspace.prefs("get", "language")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.line == "en")
        // And set types as the service reads: a Double key takes "15" as 15.0.
        #expect(try await workspace.prefs("set", "map_zoom", "15").status == 0)
        #expect(try await workspace.storedValues()["map_zoom"] == .double(15))
    }

    @Test func theManifestIsRewrittenOnlyWhenItChanges() async throws {
        _ = try await PreferencesStore(
            fileURL: workspace.store, declaring: [PreferenceKeys.language])
        let first = try identity(published)
        let text = contents(published)
        _ = try await PreferencesStore(
            storage: FileStorage(fileURL: workspace.store), declaring: [PreferenceKeys.language])
        #expect(try identity(published) == first)
        _ = try await PreferencesStore(
            storage: FileStorage(fileURL: workspace.store), declaring: [PreferenceKeys.darkMode])
        #expect(contents(published) != text)
        #expect(try permissions(published) == 0o600)
        // No temporary file is left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
        #expect(names.allSatisfy { !$0.hasSuffix(".tmp") }, "\(names)")
    }

    @Test func aRecordStorePublishesItsFields() async throws {
        let display = try await RecordStore<Display>(fileURL: workspace.store)
        let manifest = try PreferencesManifest.load(from: published)
        #expect(manifest["theme"]?.type == .string)
        #expect(manifest["zoom"]?.type == .double)
        #expect(manifest["columns"]?.type == .int)
        #expect(try await workspace.prefs("set", "zoom", "14.5").status == 0)
        try await display.store.reload()
        #expect(display.value.zoom == 14.5)
        #expect(try await workspace.prefs("get", "columns").line == "3")
    }

    @Test func listDefaultsShowsUnsetDeclaredKeysMarked() async throws {
        _ = try await PreferencesStore(
            fileURL: workspace.store, declaring: [PreferenceKeys.language, PreferenceKeys.darkMode])
        try await workspace.prefs("set", "dark_mode", "true")
        let output = try await workspace.prefs("list", "--defaults")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == "dark_mode = true\nlanguage = \"en\"  # default\n")
        // Without --defaults, only what is stored.
        #expect(try await workspace.prefs("list").standardOutput == "dark_mode = true\n")
        let json = try await workspace.prefs("list", "--defaults", "--json")
        #expect(
            try TestJSON.parse(json.standardOutput) == [
                "dark_mode": ["value": true], "language": ["value": "en", "default": true],
            ])
    }

    @Test func getLongSaysWhoChangedTheKeyOrThatItIsADefault() async throws {
        _ = try await PreferencesStore(
            fileURL: workspace.store, declaring: [PreferenceKeys.language])
        #expect(try await workspace.prefs("get", "language", "--long").line == "en  # default")
        try await workspace.prefs("set", "language", "fr")
        let line = try await workspace.prefs("get", "language", "--long").line
        #expect(line.hasPrefix("fr  # "), "\(line)")
        #expect(line.hasSuffix(" by \(effectiveUserName()) using prefs"), "\(line)")
    }

    @Test func theEnvironmentVariableNamesAManifest() async throws {
        let manifest = workspace.file("elsewhere.json")
        try write(
            #"{"format": 1, "keys": {"retries": {"type": "int", "default": 3}}}"#, to: manifest)
        let output = try await workspace.prefs(
            environment: ["PREFS_MANIFEST": manifest.path],
            ["--file", workspace.store.path, "get", "retries"])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.line == "3")
    }

    @Test func aManifestThatCannotBePublishedIsAProblemNotAFailure() async throws {
        // A directory where the manifest should be.
        try FileManager.default.createDirectory(at: published, withIntermediateDirectories: false)
        let store = try await PreferencesStore(
            fileURL: workspace.store, declaring: [PreferenceKeys.language])
        #expect(store.problems.contains { $0.message.contains("key manifest") })
        try await store.set(.language, "fr")
        #expect(store[.language] == "fr")
    }

    /// `prefs` reads the manifest back through the backend: none before it
    /// is published, nor below a file where a directory should be.
    @Test func theFileBackendReadsBackTheManifestItPublished() throws {
        let storage = FileStorage(fileURL: workspace.store)
        let manifests = try #require(storage.manifests)
        #expect(try manifests.storeManifest() == nil)
        try manifests.publish(Array("{}".utf8), program: "tool")
        let read = try #require(try manifests.storeManifest())
        #expect(read.bytes == Array("{}".utf8))
        #expect(read.location == storage.manifestPath)
        let belowAFile = FileStorage(fileURL: published.appendingPathComponent("prefs.json"))
        let below = try #require(belowAFile.manifests, "a file backend has no manifests")
        #expect(try below.storeManifest() == nil)
    }

    /// The store hands the declared manifest to its backend, whatever the
    /// backend; one without a place for it (no manifests) publishes nothing
    /// and the store works on.
    @Test func theBackendReceivesTheManifestAndOneWithoutAPlaceIsFine() async throws {
        let publishing = PublishingStorage()
        let store = try await PreferencesStore(
            storage: publishing, declaring: [PreferenceKeys.language])
        #expect(store.problems.isEmpty)
        let published = try #require(publishing.published.last, "nothing was published")
        let manifest = try PreferencesManifest(jsonText: String(decoding: published, as: UTF8.self))
        #expect(manifest["language"]?.defaultValue == "en")
        #expect(manifest["language"]?.type == .string)

        let plain = try await PreferencesStore(
            storage: InMemoryStorage(), declaring: [PreferenceKeys.language])
        #expect(plain.problems.isEmpty)
        try await plain.set(.language, "fr")
        #expect(plain[.language] == "fr")
    }
}

/// An in-memory backend that keeps what the store asks it to publish.
private final class PublishingStorage: PreferencesStorage, ManifestPublishing {
    let inner = InMemoryStorage()
    private let publishedBytes = Locked<[[UInt8]]>([])
    var published: [[UInt8]] { publishedBytes.withLock { $0 } }

    var location: String { "publishing" }
    var historyArchive: (any HistoryArchive)? { nil }
    var manifests: (any ManifestPublishing)? { self }
    var replicas: (any ReplicaRegistry)? { nil }
    var privacy: (any StoragePrivacy)? { nil }
    func read() throws -> StoredContents { try inner.read() }
    func currentRevision() throws -> StorageRevision { try inner.currentRevision() }
    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        try inner.write(bytes, ifRevision: expected)
    }
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T { try body() }
    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try inner.setAsideCorrupt(contents, stamp: stamp)
    }
    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    { nil }

    func publish(_ bytes: [UInt8], program: String) throws {
        publishedBytes.withLock { $0.append(bytes) }
    }
    func storeManifest() throws -> (bytes: [UInt8], location: String)? {
        published.last.map { ($0, location) }
    }
    func programManifests() throws -> [String: [UInt8]] { [:] }
    func manifest(digest: String) throws -> [UInt8]? { nil }
}
