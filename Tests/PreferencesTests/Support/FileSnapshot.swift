import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

/// The store file at `url` as its bytes say now, on their own: what a new
/// process would read. A second store handle on the same file shares this
/// process's in-memory state (S9) and may never read the file, so a test
/// that says "in the file" reads it through this.
///
/// It is an oracle of its own, not the library's decoder: the JSON is read
/// by `TestJSON`, the tests' own reader, and each member and time is taken by hand as the
/// file format article describes it.
/// Only the history's entries go through `HistoryEntry`'s own reading.
func fileSnapshot(_ url: URL) throws -> PreferencesSnapshot {
    let bytes = try #require(
        FileManager.default.contents(atPath: url.path), "no file at \(url.path)")
    guard case .object(let members) = try TestJSON.parse(Array(bytes)) else {
        throw TestJSON.Failure(reason: "\(url.path) is not a JSON object")
    }
    var document = StoreDocument()
    guard case .object(let values)? = members["values"] else {
        throw TestJSON.Failure(reason: "\(url.path) has no values object")
    }
    document.values = values
    if case .int(let version)? = members["version"] { document.version = Int(version) }
    var records: [String: ChangeRecord] = [:]
    if case .object(let modified)? = members["modified"] {
        for (key, record) in modified {
            guard case .object(let fields) = record, case .string(let at)? = fields["at"],
                case .string(let user)? = fields["by"],
                case .string(let program)? = fields["program"],
                let date = fileDate(at)
            else { continue }
            var sudoUser: String?
            if case .string(let name)? = fields["sudo_user"] { sudoUser = name }
            records[key] = ChangeRecord(
                PreferenceModification(date: date, user: user, sudoUser: sudoUser, program: program)
            )
        }
    }
    document.modifications = ChangeLog(records)
    if case .int(let sequence)? = members["sequence"] { document.history.sequence = sequence }
    if case .array(let entries)? = members["history"] {
        for entry in entries {
            let text = Array(entry.jsonText.utf8)
            guard case .object(let fields) = entry, case .int(let sequence)? = fields["sequence"]
            else { continue }
            document.history.carried.append(.init(sequence: sequence, text: text))
        }
    }
    if case .object(let temporary)? = members["temporary"] {
        for (key, entry) in temporary {
            guard case .object(let fields) = entry, case .string(let until)? = fields["until"],
                let value = fields["value"], let end = fileDate(until)
            else { continue }
            document.temporary.overrides[key] = .init(value: value, until: end)
        }
    }
    if case .array(let names)? = members["secrets"] {
        for case .string(let name) in names { document.secretKeys.insert(name) }
    }
    return PreferencesSnapshot(document, registeredDefaults: [:])
}

/// A time as the file writes it, `2026-12-02T03:12:09.12Z`: whole seconds
/// counted by hand (days from the civil date) and the fraction added, as a
/// `Date` counts from 2001.
private func fileDate(_ text: String) -> Date? {
    let parts = text.split(whereSeparator: { "-T:Z".contains($0) }).map(String.init)
    guard text.hasSuffix("Z"), parts.count == 6, let year = Int(parts[0]),
        let month = Int(parts[1]), let day = Int(parts[2]), let hour = Int(parts[3]),
        let minute = Int(parts[4])
    else { return nil }
    let secondParts = parts[5].split(separator: ".", omittingEmptySubsequences: false)
    guard let second = Int(secondParts[0]) else { return nil }
    // Days since 1970-01-01 of a proleptic Gregorian date.
    let shifted = month <= 2 ? year - 1 : year
    let era = (shifted >= 0 ? shifted : shifted - 399) / 400
    let yearOfEra = shifted - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let unix = days * 86_400 + hour * 3_600 + minute * 60 + second
    let fraction = secondParts.count == 2 ? Double("0." + secondParts[1]) ?? 0 : 0
    return Date(timeIntervalSinceReferenceDate: Double(unix - 978_307_200) + fraction)
}

/// A JSON reader for the tests, written apart from the library's: objects,
/// arrays, strings with every escape, numbers (an integer when the text has
/// no fraction or exponent and fits in 64 bits), `true`, `false`, `null`.
/// The `values` object of the store file at `url`, read by ``TestJSON``.
func storedValues(_ url: URL) throws -> [String: PreferenceValue] {
    try storedValues(Array(try Data(contentsOf: url)), file: url.path)
}

/// The `values` object of a store file's `bytes`, read by ``TestJSON``.
func storedValues(_ bytes: [UInt8], file: String) throws -> [String: PreferenceValue] {
    guard case .object(let root) = try TestJSON.parse(bytes),
        case .object(let values)? = root["values"]
    else { throw TestJSON.Failure(reason: "\(file) is not a store file with a values object") }
    return values
}
