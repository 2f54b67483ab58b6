import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

@Suite(.scaledTimeLimit(minutes: 10)) struct ValueTypesTests {
    /// Writes through one store, reopens the file in a fresh process-like
    /// state (a new storage object with a different path spelling) and reads back.
    func roundTrip<Value: Equatable>(
        _ key: PreferenceKey<Value>, _ value: Value, stored expected: PreferenceValue? = nil
    ) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("values.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(key, value)
        #expect(store[key] == value)
        let values = try storedValues(url)
        if let expected { #expect(values[key.name] == expected) }
        let reread = try PreferencesSnapshot(values: values).value(for: key)
        #expect(reread == value)
    }

    @Test func scalars() async throws {
        try await roundTrip(.darkMode, true, stored: true)
        try await roundTrip(.language, "日本語 \"quoted\"\n", stored: "日本語 \"quoted\"\n")
        try await roundTrip(.counter, -42, stored: -42)
        try await roundTrip(.bigCounter, Int64.max, stored: .int(Int64.max))
        try await roundTrip(.mapZoom, 14.25, stored: 14.25)
        try await roundTrip(.ratio, 0.1, stored: 0.1)
    }

    @Test func nonFiniteDoublesAreStrings() async throws {
        try await roundTrip(.mapZoom, .infinity, stored: "Infinity")
        try await roundTrip(.mapZoom, -.infinity, stored: "-Infinity")
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("nan.json"))
        try await store.set(.mapZoom, .nan)
        #expect(store[.mapZoom].isNaN)
        #expect(store.snapshot.values["map_zoom"] == "NaN")
    }

    @Test func dataIsBase64() async throws {
        try await roundTrip(.blob, Data([0, 1, 2, 254, 255]), stored: "AAEC/v8=")
    }

    @Test func datesAreISO8601UTCAndRoundTripExactly() async throws {
        try await roundTrip(
            .when, Date(timeIntervalSince1970: 1_098_786_813), stored: "2004-10-26T10:33:33Z")
        try await roundTrip(
            .when, Date(timeIntervalSince1970: 1_098_786_813.25), stored: "2004-10-26T10:33:33.25Z")
        let now = Date()
        try await roundTrip(.when, now)
        try await roundTrip(.lastSync, now)
    }

    @Test func isoDatesWithOffsetsAreRead() throws {
        let snapshot = PreferencesSnapshot(values: ["when": "2004-10-26T12:33:33+02:00"])
        #expect(try snapshot.value(for: .when) == Date(timeIntervalSince1970: 1_098_786_813))
    }

    @Test func urlsAreAbsoluteStrings() async throws {
        try await roundTrip(
            .homepage, URL(string: "https://example.org/a?b=c")!,
            stored: "https://example.org/a?b=c")
    }

    @Test func collectionsAreNestedJSON() async throws {
        try await roundTrip(.tags, ["a", "b"], stored: ["a", "b"])
        try await roundTrip(.limits, ["cpu": 2, "mem": 512], stored: ["cpu": 2, "mem": 512])
    }

    @Test func optionalsStoreAValueAndNilRemovesTheKey() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("opt.json"))
        try await store.set(.nickname, "ada")
        #expect(store[.nickname] == "ada")
        try await store.set(.nickname, nil)
        #expect(store[.nickname] == nil)
        #expect(!store.snapshot.contains("nickname"))
    }

    @Test func enumsStoreTheirRawValues() async throws {
        try await roundTrip(.theme, .dark, stored: "dark")
        try await roundTrip(.level, .high, stored: 2)
    }

    @Test func codableStructsAreNestedObjectsNotStrings() async throws {
        try await roundTrip(
            .window, Window(width: 1024, height: 768, title: "Main"),
            stored: ["width": 1024, "height": 768, "title": "Main"])
    }

    @Test func anIntegerStoredForADoubleKeyIsNotAMismatch() throws {
        let snapshot = PreferencesSnapshot(values: ["map_zoom": 15])
        #expect(try snapshot.value(for: .mapZoom) == 15.0)
    }
}
