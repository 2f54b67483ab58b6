/// Every error the library throws.
///
/// Each case carries what you need to act on it — the file, key, line or
/// operating-system message — and its ``description`` reads as one sentence:
///
/// ```swift
/// do {
///     try await store.set(.mapZoom, 15)
/// } catch PreferencesError.io(let operation, let path, _, let message) {
///     log("could not \(operation) \(path): \(message)")
/// }
/// ```
public enum PreferencesError: Error, Sendable, Equatable {
    /// The store file is not a valid preferences file (not JSON, wrong
    /// envelope, unknown format version, or over the limits). Nothing was
    /// changed on disk.
    case corrupted(file: String, reason: String)

    /// A system call failed: `operation` is what was being done ("open",
    /// "rename", "fsync", "lock"), `code` the `errno` value.
    case io(operation: String, path: String, code: Int32, message: String)

    /// The stored value for `key` does not decode as the key's type.
    case typeMismatch(key: String, expected: String, found: String)

    /// A key name that cannot be stored (empty, too long, control characters).
    case invalidKey(key: String, reason: String)

    /// A value that cannot be stored or does not fit its declared type,
    /// range or manifest entry.
    case invalidValue(key: String, reason: String)

    /// A write would make the file larger or deeper than the configured limits.
    case limitExceeded(file: String, reason: String)

    /// A legacy settings file that its own platform would reject. `line` and
    /// `column` are 1-based where the format has them.
    case legacyFormat(file: String, line: Int?, column: Int?, reason: String)

    /// A migration step failed; nothing was written and the legacy sources
    /// were left as they were.
    case migrationFailed(step: String, reason: String)

    /// A suite name that is not `[A-Za-z0-9._-]+` or starts with a dot.
    case invalidSuiteName(String)

    /// A key manifest that is not valid; `reason` names the entry at fault.
    case invalidManifest(file: String, reason: String)

    /// A change the history no longer holds: `sequence` is older than the
    /// oldest entry kept (`oldestKept`, nil when none is kept)
    /// (<doc:HistoryAndUndo>).
    case historyUnavailable(sequence: Int64, oldestKept: Int64?)

    /// A change that has not been made: `sequence` is past `lastMade`, the
    /// store's latest change, or below 1 where a change is asked for
    /// (changes are numbered from 1; <doc:HistoryAndUndo>).
    case changeNotMade(sequence: Int64, lastMade: Int64)

    /// An undo refused because `keys` changed after the change it would
    /// undo; nothing was written (<doc:HistoryAndUndo>).
    case conflict(keys: [String], reason: String)

    /// A call on a store after its ``PreferencesStore/close()``: nothing was
    /// read or written. `location` is the store's file or key.
    case closed(location: String)
}

extension PreferencesError: CustomStringConvertible, CustomDebugStringConvertible {
    /// One sentence naming what failed and where.
    public var description: String {
        switch self {
        case .corrupted(let file, let reason):
            return "\(file) is not a valid preferences file: \(reason)"
        case .io(let operation, let path, let code, let message):
            return "cannot \(operation) \(path): \(message) (errno \(code))"
        case .typeMismatch(let key, let expected, let found):
            return "key '\(key)' holds \(found), which is not \(expected)"
        case .invalidKey(let key, let reason):
            return "invalid key '\(key.debugDescription.dropFirst().dropLast())': \(reason)"
        case .invalidValue(let key, let reason):
            return "invalid value for key '\(key)': \(reason)"
        case .limitExceeded(let file, let reason):
            return "\(file): \(reason)"
        case .legacyFormat(let file, let line, let column, let reason):
            var place = file
            if let line {
                place += ":\(line)"
                if let column { place += ":\(column)" }
            }
            return "\(place): \(reason)"
        case .migrationFailed(let step, let reason):
            return "migration '\(step)' failed: \(reason)"
        case .historyUnavailable(let sequence, let oldest):
            guard let oldest else {
                return "change #\(sequence) is not in the history, which keeps no entries"
            }
            if sequence == 0 {
                return
                    "the history kept does not reach back that far (the oldest kept is #\(oldest))"
            }
            return "change #\(sequence) is not in the history kept (the oldest kept is #\(oldest))"
        case .changeNotMade(let sequence, let lastMade):
            guard sequence >= 1 else {
                return "there is no change #\(sequence): changes are numbered from 1"
            }
            return "change #\(sequence) has not been made: the last change is #\(lastMade)"
        case .conflict(let keys, let reason):
            return "\(reason): \(keys.map { "'\($0)'" }.joined(separator: ", "))"
        case .closed(let location):
            return "the store at \(location) was closed: open it again to use it"
        case .invalidManifest(let file, let reason):
            return "\(file) is not a valid key manifest: \(reason)"
        case .invalidSuiteName(let name):
            return
                "invalid suite name '\(name)': use letters, digits, '.', '_' and '-', not starting with '.'"
        }
    }

    /// The description, prefixed with the type's name.
    public var debugDescription: String { "PreferencesError: \(description)" }
}
